export {};
//# sourceMappingURL=observation.js.map