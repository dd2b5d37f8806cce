/**
 * How much answer the gateway queues for one client connection before it waits for that client:
 * the high-water mark of every response (and socket) of the HTTP server (gateway.ts), the slice
 * a complete body is written in (write-body.ts), and the point from which the SSE writer stops
 * pulling upstream parts (sse-response.ts). Stated in docs/operations.md ("Clients that do not
 * read"). The operating system's socket send buffer holds more, outside this process.
 */
export const RESPONSE_HIGH_WATER_BYTES = 64 * 1024;
