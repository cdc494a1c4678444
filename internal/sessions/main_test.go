package sessions

import (
	"testing"

	"github.com/twicekit/twicekit/internal/leakcheck"
	"github.com/twicekit/twicekit/pgfixture"
)

func TestMain(m *testing.M) { leakcheck.Exit(pgfixture.Main(m)) }
