#!/bin/sh
# Initializes the data folder, starts MariaDB on the container network, creates the database and its user.
set -eu
mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
[ -d /var/lib/mysql/mysql ] || mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
mariadbd --user=mysql --bind-address=0.0.0.0 --skip-name-resolve &
server=$!
until mariadb-admin ping --silent 2>/dev/null; do sleep 0.3; done
mariadb -e "CREATE DATABASE IF NOT EXISTS \`$MARIADB_DATABASE\`; CREATE USER IF NOT EXISTS '$MARIADB_USER'@'%' IDENTIFIED BY '$MARIADB_PASSWORD'; GRANT ALL ON \`$MARIADB_DATABASE\`.* TO '$MARIADB_USER'@'%';"
touch /run/mysqld/ready
trap 'kill $server' TERM INT
wait $server
