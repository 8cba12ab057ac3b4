#!/usr/bin/env bash
# Writes the s3lect(1) man page (roff) to stdout from what the tool itself prints: the top-level
# `--help`, then `COMMAND --help` for every command that help lists, so the page never drifts
# from the binary. The help texts are laid out for a terminal already, so they go in verbatim
# (no filling); only roff's control characters are escaped.
#
#   bash packaging/make-man-page.sh PATH/TO/s3lect VERSION > s3lect.1
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 PATH/TO/s3lect VERSION" >&2
  exit 2
fi
tool=$1 version=$2

# A help text as preformatted roff: backslashes as \e, a leading '.' or "'" (which roff would
# read as a request) guarded by \&, and characters outside ASCII (the help's "…", "≤") as
# \[uXXXX], which every groff reads whatever the locale.
verbatim() {
  printf '.nf\n'
  sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/" |
    perl -CS -pe 's/([^\x00-\x7f])/sprintf("\\[u%04X]", ord($1))/ge'
  printf '.fi\n'
}

top_help=$("$tool" --help)
# The commands, from the "commands:" section of the top help: "  NAME  description".
mapfile -t commands < <(printf '%s\n' "$top_help" |
  awk '/^commands:$/ { inside = 1; next } inside && /^$/ { exit } inside { print $1 }')
if [ ${#commands[@]} -eq 0 ]; then
  echo "$0: no commands found in '$tool --help'" >&2
  exit 1
fi

cat <<HEAD
.TH S3LECT 1 "" "s3lect $version" "User Commands"
.SH NAME
s3lect \\- leader election on S3 conditional writes
.SH SYNOPSIS
.B s3lect
.I COMMAND
.RI [ options ]
.br
.B s3lect \\-\\-help
.br
.B s3lect \\-\\-version
.SH DESCRIPTION
HEAD
printf '%s\n' "$top_help" | verbatim
printf '.SH COMMANDS\n'
for command in "${commands[@]}"; do
  printf '.SS "s3lect %s"\n' "$command"
  "$tool" "$command" --help | verbatim
done
cat <<'TAIL'
.SH FILES
.TP
.I /usr/lib/systemd/system/s3lect@.service
A systemd unit template: \fBsystemctl enable \-\-now s3lect@NAME\fR runs \fBs3lect run\fR with the
settings of \fI/etc/s3lect/NAME.env\fR.
.TP
.I /usr/share/doc/s3lect/examples/s3lect.env
An example of such an environment file.
.SH SEE ALSO
.BR systemd.service (5),
.BR systemd.exec (5)
TAIL
