// The host suite of the startup benchmark (bench/host_startup.sh), one launch: waits until Token Gauge offers its
// models and its server answers, then prints the figures as one `tg-startup {json}` line.
'use strict';
const vscode = require('vscode');

describe('startup', function () {
    this.timeout(60000);
    it('offers models and starts the server', async () => {
        const api = await vscode.extensions.getExtension('tokengauge.tokengauge').activate();
        // Ask for the models as a chat view does when the window opens.
        while ((await vscode.lm.selectChatModels({ vendor: 'tokengauge' })).length === 0) {
            await new Promise((r) => setTimeout(r, 20));
        }
        for (;;) {
            const figures = api.diagnostics.startup();
            if (figures.modelsMs !== undefined && figures.serverMs !== undefined) {
                console.log(`tg-startup ${JSON.stringify(figures)}`);
                return;
            }
            await new Promise((r) => setTimeout(r, 50));
        }
    });
});
