import { FieldReader, parseRootObject } from './json-fields.js';
import { internalIssue } from './json-scan.js';
/**
 * Usage of one JSON object text: a whole completion / chat response, or the data of one SSE chunk (without the
 * `data: ` prefix, which is also tolerated). The `[DONE]` sentinel reads as no usage, without an issue.
 */
export function parseUsage(text) {
    const issues = [];
    try {
        // tolerate a whole SSE line: `data: {…}` (the prefix is replaced by spaces so offsets stay those of `text`)
        const body = text.startsWith('data:') ? `     ${text.slice(5)}` : text;
        if (body.trim() === '[DONE]')
            return { value: null, issues };
        const root = parseRootObject(body, 'a completion response', issues);
        if (root === null)
            return { value: null, issues };
        const read = new FieldReader(body, issues);
        const usage = read.obj(root, 'usage', []);
        if (usage === null)
            return { value: null, issues };
        const details = read.obj(usage, 'prompt_tokens_details', ['usage']);
        return {
            value: {
                promptTokens: read.uint(usage, 'prompt_tokens', ['usage']),
                completionTokens: read.uint(usage, 'completion_tokens', ['usage']),
                totalTokens: read.uint(usage, 'total_tokens', ['usage']),
                cachedTokens: details === null ? null : read.uint(details, 'cached_tokens', ['usage', 'prompt_tokens_details']),
            },
            issues,
        };
    }
    catch (e) {
        return { value: null, issues: [...issues, internalIssue(e, null)] };
    }
}
//# sourceMappingURL=parse-usage.js.map