/*
 * mimetypes: the media type a file's name gives by its extension, as
 * every Unix mail and web tool reads it: from mime.types(5), the
 * system's /etc/mime.types (Debian's media-types package), or the file
 * MSG_MIME_TYPES names instead. A machine without the file has no types
 * by name, and callers fall back on the body.
 */
#ifndef MSG_MIMETYPES_H
#define MSG_MIMETYPES_H

/*
 * The type of a file called name (a path or a base name), or NULL when
 * its extension is unknown or it has none. The longest extension listed
 * wins ("x.sarif.json" is "sarif.json" before "json"); case is ignored.
 * The file of types is read once, on first use.
 */
const char *mimetypes_by_name(const char *name);

#endif
