// A file-system error in words (`no such file`), not its code (`ENOENT`).

const WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory, not a file',
  ENOTDIR: 'a part of the path is not a directory',
  EMFILE: 'too many open files',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  EEXIST: 'already exists',
};

export function fileErrorText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (typeof code === 'string' && code in WORDS) return WORDS[code]!;
  return err instanceof Error ? err.message : String(err);
}
