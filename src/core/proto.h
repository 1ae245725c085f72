/*
 * proto.h - the runner's wire protocol (included by kb.h).
 *
 * A frame is a 4-byte little-endian payload length followed by that many
 * bytes of UTF-8 JSON: one object with a "type".  The front end sends
 * requests; the runner answers each with zero or more "progress" frames and
 * then exactly one "result" frame.  Bump KB_PROTOCOL_VERSION on any change
 * of the message types or their fields' meaning (tmux-protocol.h habit).
 *
 *   front end -> runner          runner -> front end
 *   {"type":"hello","protocol":N,"version":"x"}
 *                                {"type":"hello","protocol":N,"version":"x","host":..}
 *                                or, when the versions differ, {"type":"hello",
 *                                "status":"refused","message":..} and it exits
 *   {"type":"run", ...}          (may carry "text": the file's contents, and
 *                                "prebuilt": a cubin compiled by the client,
 *                                docs/remote.md; then the runner compiles nothing)
 *   {"type":"run", ...}          {"type":"progress","phase":..}* {"type":"result",..}
 *   {"type":"calibrate"}         {"type":"progress",..}* {"type":"result",..}
 *   {"type":"devices"}           {"type":"result",..}
 *   {"type":"quit"}              (exits)
 */
#ifndef KB_PROTO_H
#define KB_PROTO_H

#include <stddef.h>
#include <stdint.h>

/* Versioning rule (docs/remote.md): both ends send their number in "hello"
 * and each refuses any other number, naming both.  2: hello both ways,
 * "text" and "prebuilt" in run requests (remote runners). */
#define KB_PROTOCOL_VERSION 2
#define KB_FRAME_MAX (256u << 20) /* a larger length means a broken stream */

/* An incremental frame decoder for non-blocking readers. */
typedef struct {
	char *buf;
	size_t len, cap;
} kb_frame_reader;

/* Appends n bytes read from the stream. */
void kb_frame_feed(kb_frame_reader *r, const void *p, size_t n);
/* Takes the next complete frame: returns 1 and a new NUL-terminated string
 * (*len bytes) in *frame, 0 when more bytes are needed, KB_EINVAL when the
 * stream is corrupt (a length over KB_FRAME_MAX). */
int kb_frame_next(kb_frame_reader *r, char **frame, size_t *len);
void kb_frame_reader_free(kb_frame_reader *r);
/* The protocol number this process speaks: KB_PROTOCOL_VERSION, or
 * $KBENCH_TEST_PROTOCOL (for the tests of the mismatch refusal only). */
int kb_proto_version(void);
/* Encodes a frame (header + payload) into a new buffer of *out_len bytes. */
char *kb_frame_encode(const char *payload, size_t len, size_t *out_len);

#endif
