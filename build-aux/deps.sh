#!/bin/sh
# Install the Debian packages msgtools needs, or say how to.
# usage: deps.sh test|bench
set -eu

# Building and testing: compiler libraries, pkg-config, bats and the
# peers the tests compare against (xmllint, xsltproc, jq), time(1) for
# memory checks, mandoc for the man page lint, shellcheck for the test
# scripts' lint, and DocBook XSL with the DocBook XML DTDs and examples,
# a stylesheet set msg-translate must run; rabbitmq-c for the amqp:
# channels and a RabbitMQ broker for their tests (which start one of
# their own on the loopback address and skip without it).
need="make gcc pkg-config libxml2-dev libxslt1-dev libjansson-dev bats
libxml2-utils xsltproc jq time mandoc shellcheck docbook-xsl docbook-xml
librabbitmq-dev rabbitmq-server"
case "${1:-test}" in
bench) need="$need xmlstarlet xml-twig-tools" ;;
esac
# OpenSSH's sftp client, its sftp-server and sshd, for the tests of an
# inbox against a real upload (sftp -D with no daemon, and a private
# sshd the test starts on 127.0.0.1 and stops).
need="$need openssh-client openssh-sftp-server openssh-server"

missing=
for p in $need; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "msgtools: missing packages:$missing" >&2
	echo "run as root: apt-get update && apt-get install -y$missing" >&2
	exit 1
fi
echo "msgtools: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# A package's postinst would start its daemon (sshd on port 22 of every
# interface, a RabbitMQ broker): a policy-rc.d that answers 101 (action
# forbidden) stops invoke-rc.d from starting any, for the time of the
# install only; the tests start their own. One already there is the
# machine's and is left alone. Ours goes on every way out: the EXIT
# trap runs after a failed install too (set -e), and a signal exits.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ] && [ ! -L "$policy" ]; then
	trap 'rm -f "$policy"' EXIT
	trap 'exit 1' HUP INT TERM
	printf '#!/bin/sh\n# build-aux/deps.sh of msgtools: no service starts while it installs.\nexit 101\n' >"$policy"
	chmod 755 "$policy"
fi
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
