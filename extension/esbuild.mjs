// Bundle the extension into dist/extension.js (vscode stays external: the host provides it), and the
// usage dashboard's browser code (Observable Plot included) into server/tokengauge/data/dashboard.js,
// its one home: the webview loads it from there and `tokengauge report` inlines it.
import { build } from 'esbuild';

await Promise.all([
    build({
        entryPoints: ['extension/src/extension.ts'],
        bundle: true,
        outfile: 'dist/extension.js',
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        external: ['vscode'],
        sourcemap: true,
        logLevel: 'info',
    }),
    build({
        entryPoints: ['extension/dashboard/main.ts'],
        bundle: true,
        outfile: 'server/tokengauge/data/dashboard.js',
        platform: 'browser',
        format: 'iife',
        target: 'es2022',
        minify: true,
        sourcemap: false,
        legalComments: 'none',
        logLevel: 'info',
    }),
]);
