/*
 * sizes: the sizes that bound memory and that tools and readers must
 * agree on, each named once.
 */
#ifndef MSG_SIZES_H
#define MSG_SIZES_H

/*
 * The largest header block of a frame, blank line included (msg-format(5)
 * says 64 KiB). A reader holds a whole block before it knows the body's
 * length, so this is what bounds its memory against a stream that never
 * ends its headers; writers keep to it so that every reader takes what
 * they write. It holds hundreds of headers and stays small beside a read
 * buffer.
 */
#define FRAME_HEADER_MAX (64 * 1024)

/*
 * How much one read of an input asks for, and so how much of a body in
 * passage is held at a time: large enough that a stream costs few system
 * calls a megabyte, small enough to stay in the processor's caches and
 * for every reader of a tool to hold one (a frame reader's buffer is this
 * and FRAME_HEADER_MAX).
 */
#define IO_CHUNK (256 * 1024)

/*
 * A frame writer's buffer is written out once it holds this much: small
 * frames go out many to a write(2), and a piece of a body this large
 * goes straight out without a copy.
 */
#define WRITE_FLUSH_AT (64 * 1024)

/*
 * The largest raw body (msg-wrap, msg-split -r) held in memory. Its length
 * must be known before its frame begins: a larger one from a pipe is
 * spooled to a temporary file, a larger file is read where it lies.
 * msg-wrap(1) gives this size.
 */
#define RAWIN_MEMORY (1024 * 1024)

#endif
