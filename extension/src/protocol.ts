/** Names shared with the server (DESIGN §3): defined once on this side. */

export const VENDOR = 'tokengauge';
export const CONFIG_SECTION = 'tokenGauge';

export const Methods = {
    models: 'tokenGauge/models',
    countTokens: 'tokenGauge/countTokens',
    chat: 'tokenGauge/chat',
    usage: 'tokenGauge/usage',
    discoverModels: 'tokenGauge/discoverModels',
    warmCounts: 'tokenGauge/warmCounts',
} as const;

export const Notifications = {
    chatPart: 'tokenGauge/chatPart',
    status: 'tokenGauge/status',
    modelsChanged: 'tokenGauge/modelsChanged',
    calibration: 'tokenGauge/calibration',
} as const;

export const Commands = {
    setApiKey: 'tokenGauge.setApiKey',
    showUsage: 'tokenGauge.showUsage',
    restartServer: 'tokenGauge.restartServer',
    showLogs: 'tokenGauge.showLogs',
} as const;
