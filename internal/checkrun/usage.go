package checkrun

import "errors"

// usageError is an error the user made in the check's options or the
// job's setup (a token Only cannot replay, a budget that does not parse, a
// seed that does not fit the schema): the job's Run did nothing wrong, so
// the check keeps no database for it.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// Usage marks err as the user's mistake in the check's options.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// IsUsage reports whether err is the user's mistake in the check's options.
func IsUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}
