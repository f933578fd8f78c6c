// commander's collector for a repeatable option (`--set a --set b` → ['a', 'b']), shared by every command.
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
