package twicetemporal

import (
	"context"
	"errors"
	"fmt"
	"reflect"
)

var (
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
)

// validate says what is wrong with an activity Temporal would refuse to
// register or to call with args, in words that say what to do; nil when
// Temporal would run it.
func validate(fn any, args []any) error {
	if fn == nil {
		return errors.New("twicetemporal: Activity.Activity returned nil: return the activity function or method value built on the attempt's handles")
	}
	t := reflect.TypeOf(fn)
	if t.Kind() != reflect.Func {
		return fmt.Errorf("twicetemporal: Activity.Activity returned a %s, not a function: return the activity function or method value (for example (&Activities{Pool: a.Pool}).Charge)", t)
	}
	if n := t.NumOut(); n == 0 || n > 2 || t.Out(n-1) != errorType {
		return fmt.Errorf("twicetemporal: the activity %s must return an error, or a result and an error, as Temporal requires", t)
	}
	first := 0
	if t.NumIn() > 0 && t.In(0).Implements(contextType) {
		first = 1
	}
	if t.IsVariadic() {
		return fmt.Errorf("twicetemporal: the activity %s is variadic, which Temporal does not support", t)
	}
	if want := t.NumIn() - first; want != len(args) {
		return fmt.Errorf("twicetemporal: the activity %s takes %d arguments after its context, and Activity.Args has %d: give Args one value per parameter", t, want, len(args))
	}
	for i, a := range args {
		p := t.In(first + i)
		if a != nil && !reflect.TypeOf(a).AssignableTo(p) {
			return fmt.Errorf("twicetemporal: Activity.Args[%d] is a %T, and the activity's parameter %d is a %s: give a value of the parameter's type", i, a, first+i+1, p)
		}
	}
	return nil
}

// problem is what is wrong with the activity before any check runs, or nil
// (an Activity that needs a real attempt to build is validated when it
// runs).
func (act Activity) problem() error {
	if act.Activity == nil {
		return errors.New("twicetemporal: the activity is nil: set Activity.Activity to a function returning the activity built on the attempt's handles")
	}
	if _, err := act.periodic(); err != nil {
		return err
	}
	fn, ok := act.build(nil)
	if !ok {
		return nil
	}
	return validate(fn, act.Args)
}
