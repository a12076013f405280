# Print the shell code of the examples of an mdoc(7) manual page: the
# text of each ".Bd -literal" ... ".Ed" display inside ".Sh EXAMPLES",
# with the roff escapes turned into the characters a reader sees in the
# formatted page, and so pastes into a shell.
#
# usage: awk -f man-examples.awk PAGE              every example, each after
#                                                  a "# PAGE example N, line L"
#                                                  comment line
#        awk -v count=1 -f man-examples.awk PAGE   the number of examples
#        awk -v block=N -f man-examples.awk PAGE   the text of example N alone
#
# The escapes are read as mandoc(1) renders them with -Tutf8: "\e" is a
# backslash, "\&", "\|", "\^", "\c" and font changes are nothing, "\-" is
# a hyphen-minus, "\(aq" an apostrophe, and so on.  Typographic characters
# ("\(hy", "\(lq", "\'", "\~") come out as the UTF-8 characters a reader
# would copy, which a shell does not take for '-', '"' or a space.  An
# escape or a macro line that this script does not know is reported on
# standard error, and the exit status is then 2 (1 if example N does not
# exist), so that a page using one is noticed rather than misread.

function warn(msg) {
	printf "%s:%d: %s\n", FILENAME, FNR, msg | "cat 1>&2"
	status = 2
}

# The character for a special character name, as in "\(aq" or "\[aq]".
function special(name) {
	if (name in chars)
		return chars[name]
	if (name ~ /^u00[2-7][0-9A-Fa-f]$/)
		return sprintf("%c", hex(substr(name, 4)))
	warn("unknown special character \\(" name)
	return ""
}

function hex(s,    i, n) {
	n = 0
	for (i = 1; i <= length(s); i++)
		n = n * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
	return n
}

# A name after an escape such as \( \* \f: "\(xx", "\[name]" or one character.
# Sets ARGLEN to the number of characters taken after the escape letter.
function escname(s, i,    c, j) {
	c = substr(s, i, 1)
	if (c == "(") {
		ARGLEN = 3
		return substr(s, i + 1, 2)
	}
	if (c == "[") {
		j = index(substr(s, i), "]")
		if (j == 0) {
			warn("unterminated \\[")
			ARGLEN = length(s) - i + 1
			return substr(s, i + 1)
		}
		ARGLEN = j
		return substr(s, i + 1, j - 2)
	}
	ARGLEN = 1
	return c
}

# One input line of a display, escapes resolved.  Sets JOIN when the line
# ends in "\c" or in a backslash, which joins it to the next one.
function text(s,    out, i, c, name, q, j) {
	out = ""
	JOIN = 0
	i = 1
	while (i <= length(s)) {
		c = substr(s, i, 1)
		if (c != "\\") {
			out = out c
			i++
			continue
		}
		c = substr(s, i + 1, 1)
		i += 2
		if (c == "") {			# backslash-newline
			JOIN = 1
		} else if (c == "e" || c == "\\") {
			out = out "\\"
		} else if (c == "\"") {		# comment to the end of the line
			break
		} else if (c == "&" || c == "|" || c == "^" || c == ")") {
			;
		} else if (c == "-") {
			out = out "-"
		} else if (c == ".") {
			out = out "."
		} else if (c == " ") {
			out = out " "
		} else if (c == "~" || c == "0") {
			out = out nbsp
		} else if (c == "'") {
			out = out chars["aa"]
		} else if (c == "`") {
			out = out "`"
		} else if (c == "c") {
			JOIN = 1
			break
		} else if (c == "(" || c == "[") {
			name = escname(s, i - 1)
			i += ARGLEN - 1
			out = out special(name)
		} else if (c == "*") {
			name = escname(s, i)
			i += ARGLEN
			if (name in strings)
				out = out strings[name]
			else
				warn("unknown string \\*" name)
		} else if (c == "f") {		# font change: nothing to paste
			escname(s, i)
			i += ARGLEN
		} else if (c == "N") {		# \N'number'
			q = substr(s, i, 1)
			j = index(substr(s, i + 1), q)
			if (j == 0) {
				warn("unterminated \\N")
				break
			}
			out = out sprintf("%c", substr(s, i + 1, j - 1) + 0)
			i += j + 1
		} else {
			warn("unknown escape \\" c)
			out = out c
		}
	}
	return out
}

BEGIN {
	nbsp = "\302\240"
	chars["aq"] = "'"; chars["dq"] = "\""; chars["ga"] = "`"
	chars["ti"] = "~"; chars["ha"] = "^"; chars["rs"] = "\\"
	chars["sl"] = "/"; chars["ba"] = "|"; chars["at"] = "@"
	chars["sh"] = "#"; chars["Do"] = "$"; chars["lB"] = "["
	chars["rB"] = "]"; chars["lC"] = "{"; chars["rC"] = "}"
	chars["eq"] = "="; chars["pl"] = "+"; chars["lt"] = "<"
	chars["gt"] = ">"; chars["ul"] = "_"; chars["em"] = "\342\200\224"
	chars["en"] = "\342\200\223"; chars["hy"] = "\342\200\220"
	chars["mi"] = "\342\210\222"; chars["lq"] = "\342\200\234"
	chars["rq"] = "\342\200\235"; chars["oq"] = "\342\200\230"
	chars["cq"] = "\342\200\231"; chars["aa"] = "\302\264"
	chars["bu"] = "\342\200\242"
	strings["q"] = "\""
	count += 0
	block += 0
	n = 0
	status = 0
}

FNR == 1 {
	section = 0
	display = 0
	page = FILENAME
	sub(/.*\//, "", page)
}

# A line of a display; lines joined by "\c" or a trailing backslash are
# kept until the line they end on.
display {
	if ($0 ~ /^[.'][ \t]*Ed([ \t]|$)/) {
		display = 0
		if (pending != "")
			emit(pending)
		pending = ""
		next
	}
	if ($0 ~ /^[.'][ \t]*\\"/ || $0 ~ /^[.'][ \t]*$/)
		next			# comment, or an empty request
	if ($0 ~ /^[.']/) {
		warn("macro inside an example: " $0)
		next
	}
	line = text($0)
	if (JOIN) {
		pending = pending line
		next
	}
	emit(pending line)
	pending = ""
	next
}

/^\.[ \t]*Sh[ \t]/ {
	section = ($0 ~ /^\.[ \t]*Sh[ \t]+"?EXAMPLES"?[ \t]*$/)
	next
}

# A one-line display is not read: its line is macro arguments, not text.
section && /^\.[ \t]*Dl([ \t]|$)/ {
	warn("example in a .Dl line, not in a .Bd -literal display")
	next
}

section && /^\.[ \t]*Bd[ \t]/ {
	if ($0 !~ /[ \t]-literal([ \t]|$)/)
		next
	display = 1
	pending = ""
	n++
	if (!count && !block)
		printf "%s# %s example %d, line %d\n", (n > 1 ? "\n" : ""), page, n, FNR
	next
}

# Print a line of example N as the formatted page shows it: tabs expanded
# to the next multiple of eight columns, no blanks at the end.
function emit(s,    out, i, c) {
	if (count || (block && block != n))
		return
	out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\t") {
			do
				out = out " "
			while (length(out) % 8)
		} else
			out = out c
	}
	sub(/[ ]+$/, "", out)
	print out
}

END {
	if (display)
		warn("display not closed with .Ed")
	if (count)
		print n
	if (block > n && status == 0)
		status = 1
	exit status
}
