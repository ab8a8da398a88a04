// Lint the extension's TypeScript with typescript-eslint's type-aware recommended rules.
import tseslint from 'typescript-eslint';

export default tseslint.config(
    { ignores: ['dist/**', 'extension/out/**', 'node_modules/**', 'extension/esbuild.mjs', 'eslint.config.mjs', 'extension/test/host/**', 'extension/test/consumer/**', 'extension/test/agent-host/**', 'extension/test/python-stub/**', 'scripts/**', 'bench/**', 'tests/**', '.venv/**'] },
    ...tseslint.configs.recommendedTypeChecked,
    {
        languageOptions: {
            parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
        },
    },
);
