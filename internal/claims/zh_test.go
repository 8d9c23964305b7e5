package claims

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// verbs returns, for each argument of format (from 1), the verbs that
// format it, flags included ("#x", "q", ".0f"); explicit indexes ([n]) are
// followed as fmt follows them.
func verbs(format string) (map[int][]string, error) {
	out := map[int][]string{}
	next := 1
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			continue
		}
		var spec strings.Builder
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			spec.WriteByte(format[i])
			i++
		}
		for i < len(format) && (format[i] == '[' || format[i] == '.' || format[i] >= '0' && format[i] <= '9') {
			if format[i] == '[' {
				end := strings.IndexByte(format[i:], ']')
				if end < 0 {
					return nil, fmt.Errorf("unclosed [ in %q", format)
				}
				n, err := strconv.Atoi(format[i+1 : i+end])
				if err != nil {
					return nil, fmt.Errorf("index %q in %q", format[i+1:i+end], format)
				}
				next, i = n, i+end+1
				continue
			}
			spec.WriteByte(format[i])
			i++
		}
		if i >= len(format) {
			return nil, fmt.Errorf("a verb is missing at the end of %q", format)
		}
		spec.WriteByte(format[i])
		out[next] = append(out[next], spec.String())
		next++
	}
	return out, nil
}

// TestEveryChineseFormatUsesTheEnglishVerbs: each entry formats every
// argument of its English format, and only those, with the same verb.
func TestEveryChineseFormatUsesTheEnglishVerbs(t *testing.T) {
	for en, zh := range zhFormats {
		ve, err := verbs(en)
		if err != nil {
			t.Fatal(err)
		}
		vz, err := verbs(zh)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for n, vs := range vz {
			vs = slices.Compact(slices.Sorted(slices.Values(vs)))
			if len(vs) != 1 || len(ve[n]) != 1 || vs[0] != ve[n][0] {
				t.Errorf("argument %d: got verbs %v in %q; want %v, as in %q", n, vs, zh, ve[n], en)
			}
		}
		for n := range ve {
			if _, ok := vz[n]; !ok {
				t.Errorf("argument %d (%v of %q): got no verb for it in %q; want every argument shown", n, ve[n], en, zh)
			}
		}
	}
}

// TestEveryObservationHasItsChinese: every format the module's proofs pass
// to Evidence and Differs has a Chinese entry, and every entry is used.
func TestEveryObservationHasItsChinese(t *testing.T) {
	used := map[string]string{}
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "../.." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if format, ok := observationFormat(n); ok {
				used[format] = fset.Position(n.Pos()).String()
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(used) < 100 {
		t.Fatalf("found %d formats of Evidence and Differs calls; want the proofs' (over 100)", len(used))
	}
	for format, at := range used {
		if _, ok := zhFormats[format]; !ok {
			t.Errorf("%s: got no Chinese entry for %q; want one in zhFormats", at, format)
		}
	}
	for format := range zhFormats {
		if _, ok := used[format]; !ok {
			t.Errorf("zhFormats has %q, which no proof uses; want it removed", format)
		}
	}
}

// observationFormat returns the format of a call claims.Evidence(t, "…",
// …) or claims.Differs, a string constant made of literals.
func observationFormat(n ast.Node) (string, bool) {
	c, ok := n.(*ast.CallExpr)
	if !ok || len(c.Args) < 2 {
		return "", false
	}
	s, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || s.Sel.Name != "Evidence" && s.Sel.Name != "Differs" {
		return "", false
	}
	if x, ok := s.X.(*ast.Ident); !ok || x.Name != "claims" {
		return "", false
	}
	return literal(c.Args[1])
}

func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		v, err := strconv.Unquote(e.Value)
		return v, err == nil
	case *ast.BinaryExpr:
		a, ok := literal(e.X)
		b, ok2 := literal(e.Y)
		return a + b, ok && ok2 && e.Op == token.ADD
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return "", false
}
