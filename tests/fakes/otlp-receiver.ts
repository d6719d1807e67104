/**
 * A local OTLP/HTTP trace receiver (what a collector's `otlp` receiver answers on `/v1/traces`): takes
 * `http/json` and `http/protobuf` export requests, decodes them and keeps every span. The protobuf decoding is a
 * small reader of the wire format for the fields of `opentelemetry/proto/trace/v1/trace.proto` a test reads.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

export type AttributeValue = string | number | boolean | AttributeValue[] | null;

export interface ReceivedLink {
  traceId: string;
  spanId: string;
  attributes: Record<string, AttributeValue>;
}

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  links: ReceivedLink[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, AttributeValue>;
  scope: string;
}

export interface OtlpReceiver {
  /** For `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter appends `/v1/traces`). */
  url: string;
  readonly spans: ReceivedSpan[];
  /** The content types of the export requests received. */
  readonly contentTypes: string[];
  /** Requests to any other path (metrics, logs): none expected. */
  readonly otherPaths: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const otherPaths: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        otherPaths.push(`${req.method} ${req.url}`);
        res.writeHead(404).end();
        return;
      }
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
      const type = String(req.headers['content-type'] ?? '');
      contentTypes.push(type);
      try {
        if (type.startsWith('application/json')) {
          spans.push(...fromJson(JSON.parse(body.toString('utf8')) as JsonRequest));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else {
          spans.push(...fromProtobuf(body));
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        }
      } catch (err) {
        res.writeHead(400).end(String((err as Error).message));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    otherPaths,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// ---- http/json ------------------------------------------------------------------------------------------------
interface JsonAny {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAny[] };
}
interface JsonKv {
  key: string;
  value?: JsonAny;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: JsonKv[];
  links?: { traceId: string; spanId: string; attributes?: JsonKv[] }[];
  status?: { code?: number };
}
interface JsonRequest {
  resourceSpans?: {
    resource?: { attributes?: JsonKv[] };
    scopeSpans?: { scope?: { name?: string }; spans?: JsonSpan[] }[];
  }[];
}

function jsonValue(v: JsonAny | undefined): AttributeValue {
  if (!v) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonValue);
  return null;
}
const jsonAttrs = (kvs: JsonKv[] | undefined) =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonValue(kv.value)]));

function fromJson(req: JsonRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of req.resourceSpans ?? []) {
    const resource = jsonAttrs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? [])
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          name: s.name,
          kind: s.kind ?? 0,
          attributes: jsonAttrs(s.attributes),
          links: (s.links ?? []).map((l) => ({
            traceId: l.traceId,
            spanId: l.spanId,
            attributes: jsonAttrs(l.attributes),
          })),
          statusCode: s.status?.code ?? 0,
          resource,
          scope: ss.scope?.name ?? '',
        });
  }
  return out;
}

// ---- http/protobuf --------------------------------------------------------------------------------------------
/** The fields of one message: field number → the raw values (varints as bigint, the rest as bytes). */
type Fields = Map<number, (bigint | Buffer)[]>;

function readFields(buf: Buffer): Fields {
  const fields: Fields = new Map();
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const b = buf[pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    const wire = tag & 7;
    let value: bigint | Buffer;
    if (wire === 0) value = varint();
    else if (wire === 1) {
      value = buf.subarray(pos, pos + 8);
      pos += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      value = buf.subarray(pos, pos + len);
      pos += len;
    } else if (wire === 5) {
      value = buf.subarray(pos, pos + 4);
      pos += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
    const list = fields.get(field) ?? [];
    list.push(value);
    fields.set(field, list);
  }
  return fields;
}

const bytesOf = (f: Fields, n: number): Buffer[] => (f.get(n) ?? []) as Buffer[];
const one = (f: Fields, n: number): Buffer | undefined => bytesOf(f, n)[0];
const str = (f: Fields, n: number): string => one(f, n)?.toString('utf8') ?? '';
const hex = (f: Fields, n: number): string => one(f, n)?.toString('hex') ?? '';
const num = (f: Fields, n: number): number => Number((f.get(n)?.[0] as bigint | undefined) ?? 0n);

function anyValue(buf: Buffer): AttributeValue {
  const f = readFields(buf);
  if (f.has(1)) return str(f, 1);
  if (f.has(2)) return num(f, 2) !== 0;
  if (f.has(3)) return Number(BigInt.asIntN(64, f.get(3)![0] as bigint));
  if (f.has(4)) return one(f, 4)!.readDoubleLE(0);
  if (f.has(5)) return bytesOf(readFields(one(f, 5)!), 1).map(anyValue);
  return null;
}
function pbAttrs(list: Buffer[]): Record<string, AttributeValue> {
  return Object.fromEntries(
    list.map((kv) => {
      const f = readFields(kv);
      const v = one(f, 2);
      return [str(f, 1), v ? anyValue(v) : null];
    }),
  );
}

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rsBuf of bytesOf(readFields(body), 1)) {
    const rs = readFields(rsBuf);
    const resourceBuf = one(rs, 1);
    const resource = resourceBuf ? pbAttrs(bytesOf(readFields(resourceBuf), 1)) : {};
    for (const ssBuf of bytesOf(rs, 2)) {
      const ss = readFields(ssBuf);
      const scopeBuf = one(ss, 1);
      const scope = scopeBuf ? str(readFields(scopeBuf), 1) : '';
      for (const spanBuf of bytesOf(ss, 2)) {
        const s = readFields(spanBuf);
        const statusBuf = one(s, 15);
        out.push({
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          parentSpanId: hex(s, 4),
          name: str(s, 5),
          kind: num(s, 6),
          attributes: pbAttrs(bytesOf(s, 9)),
          links: bytesOf(s, 13).map((lb) => {
            const l = readFields(lb);
            return { traceId: hex(l, 1), spanId: hex(l, 2), attributes: pbAttrs(bytesOf(l, 4)) };
          }),
          statusCode: statusBuf ? num(readFields(statusBuf), 3) : 0,
          resource,
          scope,
        });
      }
    }
  }
  return out;
}
