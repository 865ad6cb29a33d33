#!/usr/bin/env bash
# Stands in for a web browser in the conformance suite: requests the
# authorization page and follows its redirects, which end at Tally's
# loopback redirect.
exec curl -fsS -o /dev/null -L --max-redirs 5 "$1"
