/**
 * Named prepared statements for PGlite, for the statements run over and over whose rows nobody
 * reads (the batched usage-record writes). PGlite's `query()` parses, describes, binds, describes,
 * executes and syncs as six separate calls into its WASM backend, every time. Inside a running
 * gateway each call costs far more than in a quiet process (cold caches between batches): the
 * Parse of `SELECT finish_generations(…)` alone was a large share of a batch's cost
 * (docs/decisions/0017-usage-batches-as-prepared-statements.md). Prepared once, a statement then runs as Bind + Execute + Sync in one call.
 *
 * Same semantics as `query()`: parameters are serialised by PGlite's own serialisers for the types
 * Postgres inferred at Parse, the statement takes the same two locks (so it never lands inside
 * another caller's transaction), and a failure throws PGlite's DatabaseError with its SQLSTATE.
 */
import { type PGlite, protocol } from "@electric-sql/pglite";
import type { SqlParameter } from "../sql/sql-client.js";

type Serializer = (value: unknown) => string;

interface Prepared {
  readonly name: string;
  /** One per parameter; undefined: PGlite has none for the type and sends `toString()`, as query() does. */
  readonly serializers: readonly (Serializer | undefined)[];
}

/** PGlite's lock-holding helpers: declared on its class, not on its public interface. */
interface PgliteLocks {
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveQuery<T>(fn: () => Promise<T>): Promise<T>;
}

export type RunPrepared = (text: string, params: readonly SqlParameter[]) => Promise<void>;

/** Statements are prepared per database (a PGlite instance is one backend) on first use. */
export function createPreparedRunner(database: PGlite): RunPrepared {
  const statements = new Map<string, Prepared>();
  const locks = database as unknown as PgliteLocks;

  async function prepare(text: string): Promise<Prepared> {
    const name = `gateway_prepared_${statements.size + 1}`;
    const { messages } = await database.execProtocol(
      concat([
        protocol.serialize.parse({ name, text }),
        protocol.serialize.describe({ type: "S", name }),
        protocol.serialize.sync(),
      ]),
    );
    const description = messages.find((message) => message.name === "parameterDescription") as
      | { dataTypeIDs: number[] }
      | undefined;
    const serializers = (description?.dataTypeIDs ?? []).map(
      (oid) => database.serializers[oid] as Serializer | undefined,
    );
    const prepared = { name, serializers };
    statements.set(text, prepared);
    return prepared;
  }

  return (text, params) =>
    locks._runExclusiveTransaction(() =>
      locks._runExclusiveQuery(async () => {
        const statement = statements.get(text) ?? (await prepare(text));
        if (params.length !== statement.serializers.length) {
          throw new RangeError(
            `statement takes ${statement.serializers.length} parameters, got ${params.length}`,
          );
        }
        const values = params.map((value, index) => {
          if (value === null || value === undefined) return null;
          const serialize = statement.serializers[index];
          return serialize ? serialize(value) : String(value);
        });
        await database.execProtocol(
          concat([
            protocol.serialize.bind({ statement: statement.name, values }),
            protocol.serialize.execute({}),
            protocol.serialize.sync(),
          ]),
        );
      }),
    );
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
