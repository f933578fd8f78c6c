// ESLint rule `kvsentinel/no-module-state`: the pure core keeps no state between calls at module level.
// Reported:
// - a top-level `let` or `var` (exported or not);
// - a write, inside any function, to something a module-level binding or an import holds: `x.pos = …`, `x[i] = …`,
//   `x.n++`, `delete x.k`, or a mutating method call (`x.set(…)`, `x.push(…)`, `x.fill(…)` …) on a module-level
//   binding, so a `const` Map, typed array or object used as scratch is caught while a table built once at load
//   time and only read afterwards is fine;
// - a top-level regular expression with the g or y flag (its lastIndex is state shared by every caller).
// Writes at module top level (filling a lookup table while the module loads) are allowed. Not seen: a write through
// an alias (`const v = table; v[0] = 1` inside a function) — the rule is a guard against the common patterns, not a
// proof.

const MUTATORS = new Set([
  'set',
  'add',
  'delete',
  'clear',
  'push',
  'pop',
  'shift',
  'unshift',
  'splice',
  'fill',
  'sort',
  'reverse',
  'copyWithin',
]);

/** Whether the scope is inside a function (not the module's own top-level code). */
function inFunction(scope) {
  for (let s = scope; s !== null; s = s.upper) {
    if (s.type === 'function' || s.type === 'class-field-initializer' || s.type === 'class-static-block') return true;
    if (s.type === 'module' || s.type === 'global') return false;
  }
  return false;
}

// TypeScript wrappers a member chain may pass through (`(x as T).pos = …`, `x!.pos = …`)
const TS_WRAPPERS = new Set(['TSAsExpression', 'TSNonNullExpression', 'TSTypeAssertion', 'TSSatisfiesExpression']);

/** What the reference to a module-level binding does to it, when it writes through it. */
function writeThrough(identifier) {
  let top = identifier;
  for (;;) {
    const parent = top.parent;
    if (parent.type === 'MemberExpression' && parent.object === top) top = parent;
    else if (TS_WRAPPERS.has(parent.type)) top = parent;
    else break;
  }
  if (top.type !== 'MemberExpression') return null; // the binding itself is only read, cast or passed along
  const parent = top.parent;
  if (parent.type === 'AssignmentExpression' && parent.left === top) return 'assigns to';
  if (parent.type === 'UpdateExpression') return 'updates';
  if (parent.type === 'UnaryExpression' && parent.operator === 'delete') return 'deletes from';
  if (parent.type === 'CallExpression' && parent.callee === top && top.type === 'MemberExpression') {
    const key = top.property;
    const name = !top.computed && key.type === 'Identifier' ? key.name : key.type === 'Literal' ? key.value : null;
    if (typeof name === 'string' && MUTATORS.has(name)) return `calls .${name}() on`;
  }
  return null;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'no mutable module-level state (the core must be reentrant)' },
    schema: [],
    messages: {
      mutableBinding:
        "top-level '{{kind}} {{name}}' is state shared by every caller; keep it in an object the caller passes",
      writeThrough:
        "this function {{what}} module-level '{{name}}': scratch shared by every caller; keep it in an object the caller passes",
      statefulRegExp:
        "top-level regular expression with the '{{flag}}' flag: its lastIndex is state shared by every caller",
    },
  },
  create(context) {
    const source = context.sourceCode;
    return {
      'Program:exit'(program) {
        const moduleScope =
          source.getScope(program).childScopes.find((s) => s.type === 'module') ?? source.getScope(program);
        for (const variable of moduleScope.variables) {
          const def = variable.defs[0];
          if (def === undefined) continue;
          if (def.type === 'Variable' && def.parent.kind !== 'const') {
            context.report({
              node: def.name,
              messageId: 'mutableBinding',
              data: { kind: def.parent.kind, name: variable.name },
            });
            continue;
          }
          for (const ref of variable.references) {
            if (!inFunction(ref.from)) continue;
            const what = writeThrough(ref.identifier);
            if (what !== null) {
              context.report({ node: ref.identifier, messageId: 'writeThrough', data: { what, name: variable.name } });
            }
          }
        }
        for (const statement of program.body) {
          const declaration = statement.type === 'ExportNamedDeclaration' ? statement.declaration : statement;
          if (declaration?.type !== 'VariableDeclaration') continue;
          for (const d of declaration.declarations) {
            const init = d.init;
            if (init?.type === 'Literal' && init.regex !== undefined) {
              const flag = /[gy]/.exec(init.regex.flags)?.[0];
              if (flag !== undefined) context.report({ node: init, messageId: 'statefulRegExp', data: { flag } });
            }
          }
        }
      },
    };
  },
};
