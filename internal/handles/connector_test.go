package handles

import (
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestConnectorNamesTheOption(t *testing.T) {
	cfg, err := pgx.ParseConfig("postgres://u@127.0.0.1:5433/db?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	_, err = Connector(func(dsn string) (driver.Connector, error) { got = dsn; return nil, nil }, "SQLConnector", cfg)
	if err == nil || err.Error() != "twice: SQLConnector: the connector is nil" || got != DriverURL(cfg) {
		t.Errorf("a nil connector: %v (dsn %q)", err, got)
	}
	_, err = Connector(func(string) (driver.Connector, error) { return nil, errors.New("refused") }, `SQLDriver("postgres")`, cfg)
	if err == nil || err.Error() != `twice: SQLDriver("postgres"): refused` {
		t.Errorf("an error: %v", err)
	}
}
