/**
 * The usage writers' failure rule (group-commit.ts, journaled-generation-repository.ts): many
 * records go in one statement, all or none; when that fails, each is written on its own, so one bad
 * record (say, of a deleted workspace) fails alone instead of taking its batch with it.
 *
 * `done` and `failed` are told about each record; what `failed` throws propagates.
 */
export async function writeAllOrEach<T>(
  chunk: readonly T[],
  write: (items: readonly T[]) => Promise<void>,
  done: (item: T) => void,
  failed: (item: T, error: unknown) => void,
): Promise<void> {
  try {
    await write(chunk);
  } catch (error) {
    if (chunk.length === 1) return failed(chunk[0], error);
    for (const item of chunk) {
      try {
        await write([item]);
      } catch (itemError) {
        failed(item, itemError);
        continue;
      }
      done(item);
    }
    return;
  }
  for (const item of chunk) done(item);
}
