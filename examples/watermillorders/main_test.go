package watermillorders_test

import (
	"testing"

	"github.com/twicekit/twicekit/examples/internal/storytest"
)

func TestMain(m *testing.M) { storytest.Main(m) }
