import { readFileSync } from 'node:fs';
const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
export const VERSION = packageJson.version;
//# sourceMappingURL=version.js.map