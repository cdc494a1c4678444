package twice

import "github.com/twicekit/twicekit/internal/handles"

// connectionsOwner names a check and its workers in the error of a server
// whose connection limit it does not fit (internal/handles).
var connectionsOwner = handles.ConnectionsOwner
