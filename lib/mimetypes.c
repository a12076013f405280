/* mimetypes: media types by file name extension, from mime.types(5). */
#include "mimetypes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"

#define SYSTEM_MIME_TYPES "/etc/mime.types"

struct mapping {
	char *ext;
	const char *type;	/* shared by the extensions of one line */
};

static struct mapping *table;
static size_t ntable;
static int loaded;

static void add_line(char *line)
{
	const char *blanks = " \t\r\n";
	char *save = NULL, *type = strtok_r(line, blanks, &save), *ext;

	if (!type || *type == '#')
		return;
	type = xstrdup(type);
	while ((ext = strtok_r(NULL, blanks, &save)) && *ext != '#') {
		table = xrealloc(table, (ntable + 1) * sizeof(*table));
		table[ntable].ext = xstrdup(ext);
		table[ntable].type = type;
		ntable++;
	}
}

/* A file that cannot be read gives no types: the body decides then. */
static void load(void)
{
	const char *path = getenv("MSG_MIME_TYPES");
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	loaded = 1;
	f = fopen(path ? path : SYSTEM_MIME_TYPES, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0)
		add_line(line);
	free(line);
	fclose(f);
}

static const char *lookup(const char *ext)
{
	for (size_t i = 0; i < ntable; i++)
		if (!strcasecmp(table[i].ext, ext))
			return table[i].type;
	return NULL;
}

const char *mimetypes_by_name(const char *name)
{
	const char *base = strrchr(name, '/');

	if (!loaded)
		load();
	base = base ? base + 1 : name;
	/* A leading dot makes a hidden name, not an extension. */
	for (const char *dot = strchr(base + (*base == '.'), '.'); dot;
	     dot = strchr(dot + 1, '.')) {
		const char *type = dot[1] ? lookup(dot + 1) : NULL;
		if (type)
			return type;
	}
	return NULL;
}
