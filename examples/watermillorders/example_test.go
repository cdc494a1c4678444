package watermillorders_test

import (
	"context"
	"fmt"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/twicekit/twicekit/examples/watermillorders"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicewatermill"
)

func ExampleMarkThenReward() {
	rep := twicewatermill.Check(context.Background(), watermillorders.Job("mark-then-reward",
		func(a *twice.Attempt) message.NoPublishHandlerFunc { return watermillorders.MarkThenReward(a.Pool) }))
	for _, f := range rep.Findings {
		fmt.Println(f.Token)
	}
	rep = twicewatermill.Check(context.Background(), watermillorders.Job("mark-and-reward",
		func(a *twice.Attempt) message.NoPublishHandlerFunc { return watermillorders.MarkAndReward(a.Pool) }))
	fmt.Println("in one transaction:", rep.OK())
	// Output:
	// crash@2
	// in one transaction: true
}
