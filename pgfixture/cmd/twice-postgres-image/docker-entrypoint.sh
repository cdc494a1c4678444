#!/bin/sh
# Entrypoint of the twicekit local PostgreSQL image (pgfixture/cmd/twice-postgres-image).
# A small POSIX-sh re-implementation of what the official postgres image's
# docker-entrypoint.sh does, so that pgfixture's container mode (and
# anything else written for the official image) works unchanged:
#   - POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB / POSTGRES_INITDB_ARGS /
#     POSTGRES_HOST_AUTH_METHOD are honoured;
#   - initdb on first start, then a temporary server on the unix socket only
#     runs /docker-entrypoint-initdb.d/*.sql and *.sh, then stops; the real
#     server starts listening on all interfaces, port 5432. As with the
#     official image, "database system is ready to accept connections" is
#     therefore logged twice on a fresh data directory;
#   - password (scram-sha-256) auth for TCP connections, trust on the socket;
#   - started as root it prepares the directories and drops to postgres.
set -eu

if [ "${1#-}" != "$1" ]; then
	set -- postgres "$@"
fi
if [ "$1" != postgres ] && [ "$1" != postmaster ]; then
	exec "$@"
fi

: "${PGDATA:=/var/lib/postgresql/data}"
export PGDATA

if [ "$(id -u)" = 0 ]; then
	mkdir -p "$PGDATA" /var/run/postgresql
	chown -R postgres:postgres "$PGDATA"
	chmod 700 "$PGDATA"
	chown postgres:postgres /var/run/postgresql
	chmod 3777 /var/run/postgresql
	exec setpriv --reuid=postgres --regid=postgres --init-groups /usr/local/bin/docker-entrypoint.sh "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
	user=${POSTGRES_USER:-postgres}
	db=${POSTGRES_DB:-$user}
	auth=${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}
	if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$auth" != trust ]; then
		echo "Error: Database is uninitialized and superuser password is not specified." >&2
		echo "       Set POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust)." >&2
		exit 1
	fi
	mkdir -p "$PGDATA"
	chmod 700 "$PGDATA"

	pwopt=""
	if [ -n "${POSTGRES_PASSWORD:-}" ]; then
		pwfile=/tmp/.pgpass-init.$$
		(umask 077 && printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile")
		pwopt="--pwfile=$pwfile"
	fi
	# shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is word-split on purpose
	initdb --username="$user" $pwopt -D "$PGDATA" ${POSTGRES_INITDB_ARGS:-}
	[ -z "$pwopt" ] || rm -f "$pwfile"

	printf '\nhost all all all %s\n' "$auth" >>"$PGDATA/pg_hba.conf"
	printf "\nlisten_addresses = '*'\n" >>"$PGDATA/postgresql.conf"

	# Temporary server: socket only, so nobody connects over TCP before init is done.
	pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start

	export PGUSER="$user" PGHOST=/var/run/postgresql PGPORT=5432
	if [ "$db" != postgres ]; then
		psql -v ON_ERROR_STOP=1 --no-password --no-psqlrc --dbname postgres --set db="$db" <<-'EOSQL'
			CREATE DATABASE :"db" ;
		EOSQL
	fi
	for f in /docker-entrypoint-initdb.d/*; do
		[ -e "$f" ] || continue
		case "$f" in
		*.sh)
			if [ -x "$f" ]; then
				echo "$0: running $f"
				"$f"
			else
				echo "$0: sourcing $f"
				# shellcheck disable=SC1090
				. "$f"
			fi
			;;
		*.sql)
			echo "$0: running $f"
			psql -v ON_ERROR_STOP=1 --no-password --no-psqlrc --dbname "$db" -f "$f"
			;;
		*) echo "$0: ignoring $f" ;;
		esac
	done
	unset PGUSER PGHOST PGPORT

	pg_ctl -D "$PGDATA" -m fast -w stop
	echo
	echo "PostgreSQL init process complete; ready for start up."
	echo
fi

exec "$@"
