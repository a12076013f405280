/*
 * jsonxml: the JSON <-> XML mapping of XPath 3.1 json-to-xml / XSLT 3.0,
 * in no namespace, used to run XPath over JSON bodies and to turn such a
 * tree back into JSON.
 *
 * Vocabulary: elements map, array, string, number, boolean, null; every
 * child of a map carries its member name in attribute key. The mapping is
 * exact in both directions:
 *   - number elements hold the number's source text unchanged (1.50, -0,
 *     1e400, 123456789012345678901234567890 stay as they are);
 *   - strings hold the decoded characters; member order and duplicate
 *     member names are kept as they come;
 *   - boolean elements hold "true" or "false"; null elements are empty.
 * A string or key holding characters XML 1.0 cannot store (C0 controls
 * other than TAB, LF, CR; U+FFFE, U+FFFF; lone surrogates written as
 * \uD800-style escapes) is stored as JSON escape text instead, marked with
 * escaped="true" (string) or escaped-key="true" (key), as XPath 3.1 does.
 * The serializer decodes such escape text and writes it back canonically.
 * Whitespace between JSON tokens is not represented.
 *
 * Parsed trees are built like libxml2's own parser builds them: names in
 * the document's dictionary, member names there too (they repeat), short
 * texts inside their node as with XML_PARSE_COMPACT. Change them only
 * through libxml2's tree functions, which know these forms.
 *
 * Output is canonical: no insignificant whitespace (compact mode), strings
 * escape only '"', '\' and controls below U+0020 (\b \f \n \r \t, else
 * \u00xx), everything else stays raw UTF-8. So serialize(parse(x)) is the
 * canonical compact form of x.
 */
#ifndef MSG_JSONXML_H
#define MSG_JSONXML_H

#include <stddef.h>

#include <libxml/tree.h>

#include "buf.h"
#include "jsonlex.h"

/*
 * Parse JSON text (RFC 8259, UTF-8) into a new XML document whose root
 * element is the mapping of the top value (scalars allowed). NULL with
 * "offset N: reason" in err on malformed JSON, nesting deeper than
 * JSON_MAX_DEPTH, or invalid UTF-8. The caller frees with xmlFreeDoc.
 */
xmlDocPtr jsonxml_parse(const char *p, size_t n, struct buf *err);

/*
 * Append the JSON text of node (an element of the vocabulary) to out.
 * pretty = 0: compact, no spaces; else indented by two spaces with ": "
 * after member names. No final newline in either mode.
 * Trees built by hand or by XSLT are accepted: whitespace-only text between
 * the children of map and array, comments and processing instructions are
 * ignored, number/boolean text may have surrounding whitespace, attributes
 * in a namespace are ignored, and a key on node itself or on an array
 * member is ignored. Returns 0, or -1 with "element '/path': reason" in err
 * (out then holds a partial text).
 */
int jsonxml_serialize(xmlNodePtr node, int pretty, struct buf *out,
		      struct buf *err);

/* Is the root element a map or array in no namespace? */
int jsonxml_is_mapping(xmlDocPtr doc);

#endif
