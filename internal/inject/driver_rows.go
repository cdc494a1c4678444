package inject

import (
	"database/sql/driver"
	"io"
	"reflect"
)

// drvRows keeps the connection marked busy while a row is fetched, so a crash
// never closes a driver connection under a running Next. The column-type
// methods fall back to what database/sql uses when a driver lacks them.
type drvRows struct {
	c     *drvConn
	inner driver.Rows
}

func wrapRows(c *drvConn, rows driver.Rows) driver.Rows {
	return &drvRows{c: c, inner: rows}
}

func (r *drvRows) Columns() []string { return r.inner.Columns() }

func (r *drvRows) Close() error {
	if !r.c.acquire() {
		return nil // the connection is closed, and its rows with it
	}
	defer r.c.release()
	return r.inner.Close()
}

func (r *drvRows) Next(dest []driver.Value) error {
	if !r.c.acquire() {
		return errConnCut
	}
	defer r.c.release()
	return r.inner.Next(dest)
}

func (r *drvRows) HasNextResultSet() bool {
	if n, ok := r.inner.(driver.RowsNextResultSet); ok {
		return n.HasNextResultSet()
	}
	return false
}

func (r *drvRows) NextResultSet() error {
	n, ok := r.inner.(driver.RowsNextResultSet)
	if !ok {
		return io.EOF
	}
	if !r.c.acquire() {
		return errConnCut
	}
	defer r.c.release()
	return n.NextResultSet()
}

func (r *drvRows) ColumnTypeScanType(index int) reflect.Type {
	if t, ok := r.inner.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(index)
	}
	return reflect.TypeFor[any]()
}

func (r *drvRows) ColumnTypeDatabaseTypeName(index int) string {
	if t, ok := r.inner.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(index)
	}
	return ""
}

func (r *drvRows) ColumnTypeLength(index int) (int64, bool) {
	if t, ok := r.inner.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(index)
	}
	return 0, false
}

func (r *drvRows) ColumnTypeNullable(index int) (nullable, ok bool) {
	if t, ok := r.inner.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(index)
	}
	return false, false
}

func (r *drvRows) ColumnTypePrecisionScale(index int) (precision, scale int64, ok bool) {
	if t, ok := r.inner.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(index)
	}
	return 0, 0, false
}
