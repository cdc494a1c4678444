// Package docs_test checks the README and the pages under docs/: their
// relative links resolve, and every code block is code that a test compiles.
package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, seen from this package's directory.
const root = ".."

// maxReadmeLines keeps the README a guide; the reference lives under docs/.
const maxReadmeLines = 400

// pages are the Markdown files these tests read, relative to the root.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadmeIsAGuide(t *testing.T) {
	n := strings.Count(read(t, "README.md"), "\n")
	if n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move reference material to docs/", n, maxReadmeLines)
	}
}

// A fence is one fenced code block of a page.
type fence struct {
	line   int    // the line of the opening fence, from 1
	lang   string // the info string
	before string // the last non-blank line before the opening fence
	body   string // the lines between the fences
}

// parse splits a page into its prose lines (fenced blocks blanked out, so
// that links are read from prose only) and its fences.
func parse(text string) (prose []string, fences []fence) {
	lines := strings.Split(text, "\n")
	var open *fence
	var body []string
	for i, l := range lines {
		switch {
		case open == nil && strings.HasPrefix(l, "```"):
			open = &fence{line: i + 1, lang: strings.TrimPrefix(l, "```")}
			for j := i - 1; j >= 0; j-- {
				if strings.TrimSpace(lines[j]) != "" {
					open.before = strings.TrimSpace(lines[j])
					break
				}
			}
			body = nil
			prose = append(prose, "")
		case open != nil && strings.HasPrefix(l, "```"):
			open.body = strings.Join(body, "\n")
			fences = append(fences, *open)
			open = nil
			prose = append(prose, "")
		case open != nil:
			body = append(body, l)
			prose = append(prose, "")
		default:
			prose = append(prose, l)
		}
	}
	return prose, fences
}

var (
	linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeRE = regexp.MustCompile("`[^`]*`")
)

// anchors are the anchors GitHub gives a page's headings.
func anchors(text string) map[string]bool {
	prose, _ := parse(text)
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range prose {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestLinksResolve checks every relative link of README.md and docs/*.md:
// its file or directory exists and, for a Markdown page, so does its
// anchor. It lists every broken link at once.
func TestLinksResolve(t *testing.T) {
	var broken []string
	for _, page := range pages(t) {
		prose, _ := parse(read(t, page))
		for i, l := range prose {
			for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				rel := page
				if file != "" {
					rel = filepath.ToSlash(filepath.Join(filepath.Dir(page), file))
				}
				where := fmt.Sprintf("%s:%d: %s", page, i+1, target)
				if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
					broken = append(broken, where+": no "+rel)
					continue
				}
				if anchor != "" && strings.HasSuffix(rel, ".md") && !anchors(read(t, rel))[anchor] {
					broken = append(broken, where+": no heading #"+anchor+" in "+rel)
				}
			}
		}
	}
	if len(broken) > 0 {
		t.Errorf("%d broken links:\n  %s", len(broken), strings.Join(broken, "\n  "))
	}
}

// commandLangs are fences of commands to type, not code to compile.
var commandLangs = []string{"sh", "shell", "bash", "console"}

var fromRE = regexp.MustCompile(`^<!-- from: (\S+) -->$`)

// TestCodeBlocksAreTested requires every fenced block of README.md and
// docs/*.md, but commands, to follow a marker comment. A
// <!-- from: PATH --> marker is checked here: the block's lines, indentation
// aside, must be consecutive lines of PATH (a compiled file, or a golden file
// a test writes). Any other marker names a block that a test of its own
// compares (examples/quickstart: README:quickstart, README:report).
func TestCodeBlocksAreTested(t *testing.T) {
	for _, page := range pages(t) {
		_, fences := parse(read(t, page))
		for _, f := range fences {
			if slices.Contains(commandLangs, f.lang) {
				continue
			}
			m := fromRE.FindStringSubmatch(f.before)
			if m == nil {
				if !strings.HasPrefix(f.before, "<!--") {
					t.Errorf("%s:%d: a ```%s block with no marker before it: put <!-- from: PATH --> on the line before, PATH being the tested file it comes from", page, f.line, f.lang)
				}
				continue
			}
			src, err := os.ReadFile(filepath.Join(root, m[1]))
			if err != nil {
				t.Errorf("%s:%d: the block comes from %s: %v", page, f.line, m[1], err)
				continue
			}
			if !containsLines(string(src), f.body) {
				t.Errorf("%s:%d: the block is not in %s (indentation aside); the code shown must be the code tested:\n%s", page, f.line, m[1], f.body)
			}
		}
	}
}

// containsLines says whether block's lines are consecutive lines of src,
// comparing each line without its leading and trailing blanks.
func containsLines(src, block string) bool {
	trim := func(s string) []string {
		lines := strings.Split(strings.Trim(s, "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimSpace(l)
		}
		return lines
	}
	s, b := trim(src), trim(block)
	for i := 0; i+len(b) <= len(s); i++ {
		if slices.Equal(s[i:i+len(b)], b) {
			return true
		}
	}
	return false
}
