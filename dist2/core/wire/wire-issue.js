// A problem found in input. The core never throws on bad input: it returns these.
export {};
//# sourceMappingURL=wire-issue.js.map