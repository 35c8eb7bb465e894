# SPDX-License-Identifier: GPL-2.0-only
# For the man pages (Documentation/module.mk): a page's top-level sections
# about the source tree or measurements on this project's machine (named
# in -v drop, TITLE|TITLE...) are replaced by where the installed documentation
# holds them (-v doc, the page's installed path). A top-level section is a
# title underlined with '='; it runs to the next one.
function heading(i) { return lines[i] != "" && lines[i] !~ /^=+$/ && lines[i + 1] ~ /^=+$/ }
BEGIN { drop = "^(" drop ")$" }
{ lines[NR] = $0 }
END {
	for (i = 1; i <= NR; i++) {
		if (!(heading(i) && lines[i] ~ drop)) {
			print lines[i]
			continue
		}
		print lines[i]
		print lines[i + 1]
		print ""
		printf "In the documentation installed with wse: %s, \"%s\".\n\n", doc, lines[i]
		for (i += 2; i <= NR && !heading(i); i++)
			;
		i--
	}
}
