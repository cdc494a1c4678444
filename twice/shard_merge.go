package twice

import (
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/reportfmt"
)

// MergeShards joins the JSON reports of checks played in shards
// (-twice.shard=k/n on n machines) into one report per check, a check
// being its test and job. The merged report has every scenario the shards
// played and every finding, in the order the unsharded check plays them,
// and the verdict of them all: broken when any shard found a broken
// promise, error when any shard could not run. A report without a shard
// passes through as it is. It fails when a shard of a check is missing or
// twice, or when the shards planned different scenarios (they ran
// different code): the merged verdict would then be wrong.
func MergeShards(reports []JSONReport) ([]JSONReport, error) {
	merged, err := report.Merge(report.Copy[[]report.JSONReport](reports))
	if err != nil {
		return nil, err
	}
	return report.Copy[[]JSONReport](merged), nil
}

// Markdown is a merged report for a reader and for GitHub's job summary:
// the verdict, then each finding with its replay line, its timeline, the
// database's differences, the effects and the hints.
func (r JSONReport) Markdown() string {
	return reportfmt.Text(report.MergedMarkdown(report.Copy[report.JSONReport](r)))
}
