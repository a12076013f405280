/*
 * xmlout: one element written as a standalone XML document (no XML
 * declaration, UTF-8), with every namespace declaration in scope where it
 * stood, so a part cut out of a namespaced document means the same thing on
 * its own. Escaping follows libxml2's own serialiser (xmlNodeDump), so the
 * result equals what xmllint prints for the same node; writing it here
 * rather than through xmlNodeDump saves the setup libxml2 does per call,
 * which dominates when a document is cut into many small parts.
 */
#ifndef MSG_XMLOUT_H
#define MSG_XMLOUT_H

#include <libxml/tree.h>

#include "buf.h"

void xmlout_element(xmlNodePtr node, struct buf *out);
/* The element's start tag alone, as xmlout_element writes it, with its
 * attributes and namespace declarations: "<order id=\"7\">". Only its
 * first byte is '<': the attribute values have theirs escaped. */
void xmlout_start_tag(xmlNodePtr node, struct buf *out);

#endif
