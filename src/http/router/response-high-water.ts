/**
 * How much answer the gateway queues for one client connection before it waits for that client:
 * the high-water mark of every response (and socket) of the HTTP server (gateway.ts), the slice
 * a complete body is written in (write-body.ts), and the point from which the SSE writer stops
 * pulling upstream parts (sse-response.ts). Stated in docs/operations.md ("Clients that do not
 * read"). The operating system's socket send buffer holds more, outside this process.
 *
 * 16 KiB (Node 20's default for streams), not more: a stream that waits for its client holds
 * about two marks (the write the socket took in part, the next batch queued behind it), and what
 * one connection holds is multiplied by every client that stops reading (decision 0345). A reading
 * client is not slowed by it: the kernel's buffer behind the socket is hundreds of times larger.
 */
export const RESPONSE_HIGH_WATER_BYTES = 16 * 1024;
