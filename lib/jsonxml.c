/* jsonxml: the XPath 3.1 mapping of JSON: its element names, and what
 * both directions (jsonxml-read.c, jsonxml-write.c) write alike. */
#include "jsonxml-parts.h"

#include "utf8.h"

const char *const jsonxml_kind_name[K_NONE] = {
	"map", "array", "string", "number", "boolean", "null",
};

void jsonxml_put_utf8(struct buf *b, uint32_t cp)
{
	char u[4];

	buf_add(b, u, utf8_encode(cp, u));
}

void jsonxml_put_escape(struct buf *b, unsigned c)
{
	static const char hex[] = "0123456789abcdef";
	char u[6] = { '\\', 'u', '0', '0', 0, 0 };

	switch (c) {
	case '"': buf_add(b, "\\\"", 2); return;
	case '\\': buf_add(b, "\\\\", 2); return;
	case '\b': buf_add(b, "\\b", 2); return;
	case '\f': buf_add(b, "\\f", 2); return;
	case '\n': buf_add(b, "\\n", 2); return;
	case '\r': buf_add(b, "\\r", 2); return;
	case '\t': buf_add(b, "\\t", 2); return;
	}
	u[4] = hex[c >> 4 & 0xf], u[5] = hex[c & 0xf];
	buf_add(b, u, 6);
}

enum jsonxml_kind jsonxml_element_kind(xmlNodePtr node)
{
	int k;

	if (node->type != XML_ELEMENT_NODE || node->ns)
		return K_NONE;
	for (k = 0; k < K_NONE; k++)
		if (xmlStrEqual(node->name, BAD_CAST jsonxml_kind_name[k]))
			return (enum jsonxml_kind)k;
	return K_NONE;
}

int jsonxml_is_mapping(xmlDocPtr doc)
{
	xmlNodePtr root = doc ? xmlDocGetRootElement(doc) : NULL;
	enum jsonxml_kind k = root ? jsonxml_element_kind(root) : K_NONE;

	return k == K_MAP || k == K_ARRAY;
}
