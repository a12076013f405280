#!/bin/sh
# unwrap: the msg-unwrap part of frames.sh on its own.
# usage: sh bench/unwrap.sh [BUILD]
exec sh "$(dirname "$0")/frames.sh" "${1:-build}" unwrap
