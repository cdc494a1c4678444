package pgfixture

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// maskedPassword replaces every password pgfixture prints.
const maskedPassword = "xxxxx"

var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// maskDSN masks the password of a URL or keyword/value connection string.
func maskDSN(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			if u.User != nil {
				if _, ok := u.User.Password(); ok {
					u.User = url.UserPassword(u.User.Username(), maskedPassword)
				}
			}
			q := u.Query()
			if q.Has("password") {
				q.Set("password", maskedPassword)
				u.RawQuery = encodeQuery(q)
			}
			return u.String()
		}
		// Unparsable URL: mask everything between "//" and "@".
		if i, j := strings.Index(dsn, "//"), strings.LastIndex(dsn, "@"); i >= 0 && j > i {
			userinfo := dsn[i+2 : j]
			if k := strings.Index(userinfo, ":"); k >= 0 {
				return dsn[:i+2] + userinfo[:k+1] + maskedPassword + dsn[j:]
			}
		}
		return dsn
	}
	return kvPassword.ReplaceAllString(dsn, "${1}"+maskedPassword)
}

// configURL renders cfg as a postgres:// URL with the password masked.
func configURL(cfg *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", Path: "/" + cfg.Database}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, maskedPassword)
	} else if cfg.User != "" {
		u.User = url.User(cfg.User)
	}
	q := url.Values{}
	if strings.HasPrefix(cfg.Host, "/") {
		q.Set("host", cfg.Host)
		q.Set("port", itoa(int(cfg.Port)))
	} else {
		u.Host = joinHostPort(cfg.Host, cfg.Port)
	}
	if cfg.TLSConfig == nil {
		q.Set("sslmode", "disable")
	}
	u.RawQuery = encodeQuery(q)
	return u.String()
}

// scrubber removes known secrets from text.
type scrubber []string

func newScrubber(passwords ...string) scrubber {
	var s scrubber
	for _, p := range passwords {
		if p == "" {
			continue
		}
		s = append(s, p)
		if e := url.QueryEscape(p); e != p {
			s = append(s, e)
		}
		if e := url.PathEscape(p); e != p {
			s = append(s, e)
		}
	}
	return s
}

// shortSecret is the length under which a password is masked only where
// it stands as a word of its own: a password "p" masks neither "postgres"
// nor "tcp".
const shortSecret = 8

func (s scrubber) String(text string) string {
	for _, p := range s {
		if len(p) >= shortSecret {
			text = strings.ReplaceAll(text, p, maskedPassword)
			continue
		}
		text = replaceWord(text, p, maskedPassword)
	}
	return text
}

// replaceWord replaces the occurrences of word in text that no letter or
// digit touches on either side.
func replaceWord(text, word, with string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, word)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(word)
		before, after := rune(0), rune(0)
		if i > 0 {
			before, _ = utf8.DecodeLastRuneInString(text[:i])
		}
		if end < len(text) {
			after, _ = utf8.DecodeRuneInString(text[end:])
		}
		b.WriteString(text[:i])
		if isWordRune(before) || isWordRune(after) {
			b.WriteString(word)
		} else {
			b.WriteString(with)
		}
		text = text[end:]
	}
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Error wraps err so that its message never carries a secret; errors.As and
// errors.Is still reach the original.
func (s scrubber) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := s.String(err.Error())
	return &scrubbedError{msg: msg, err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
