export {};
//# sourceMappingURL=snapshot.js.map