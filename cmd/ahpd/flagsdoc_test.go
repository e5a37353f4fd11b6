package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/flags.md from ahpd's flag set")

// flagsDocPath is the generated page, relative to this package.
const flagsDocPath = "../../docs/flags.md"

// TestFlagsDoc checks that docs/flags.md is the table rendered from the
// flag set; `go test ./cmd/ahpd -run TestFlagsDoc -update-docs` rewrites it.
func TestFlagsDoc(t *testing.T) {
	t.Setenv("AHPD_TOKEN", "")
	want := renderFlagsDoc(t)
	if *updateDocs {
		if err := os.WriteFile(flagsDocPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(flagsDocPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("docs/flags.md is stale: run go test ./cmd/ahpd -run TestFlagsDoc -update-docs")
	}
}

// renderFlagsDoc renders every flag with its config file key, default and
// usage, in the order the flag set sorts them.
func renderFlagsDoc(t *testing.T) string {
	t.Helper()
	cfg, err := parseConfig(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	fs := newFlagSet(cfg, io.Discard)
	keys := configKeys(reflect.ValueOf(cfg).Elem())
	var b strings.Builder
	b.WriteString("# ahpd flags\n\n")
	b.WriteString("<!-- Rendered from ahpd's flag set by TestFlagsDoc in cmd/ahpd; do not edit by hand. -->\n\n")
	b.WriteString("Every setting is a flag; the same settings may come from a JSON file given\n")
	b.WriteString("with `--config`, under the key in the second column. Flags on the command\n")
	b.WriteString("line win over the file, and the file over the defaults.\n\n")
	b.WriteString("| Flag | Config key | Default | Meaning |\n| --- | --- | --- | --- |\n")
	fs.VisitAll(func(f *flag.Flag) {
		key := keys[flagTarget(f)]
		if key == "" {
			key = pluralKey(keys, f.Name)
		}
		if key == "" {
			key = "—"
		} else {
			key = "`" + key + "`"
		}
		def := "—"
		if f.DefValue != "" && f.DefValue != "[]" {
			def = "`" + f.DefValue + "`"
		}
		name, usage := flag.UnquoteUsage(f)
		arg := ""
		if name != "" {
			arg = " " + name
		}
		fmt.Fprintf(&b, "| `--%s%s` | %s | %s | %s |\n", f.Name, arg, key, def, strings.ReplaceAll(usage, "|", `\|`))
	})
	return b.String()
}

// flagTarget is the address a flag's value is stored at, or 0 for a flag
// that calls a function.
func flagTarget(f *flag.Flag) uintptr {
	v := reflect.ValueOf(f.Value)
	if v.Kind() != reflect.Pointer {
		return 0
	}
	return v.Pointer()
}

// configKeys maps the address of each field of the config struct (and of
// the structs it embeds) to its key in the config file.
func configKeys(v reflect.Value) map[uintptr]string {
	keys := make(map[uintptr]string)
	for i := range v.NumField() {
		field, sf := v.Field(i), v.Type().Field(i)
		if sf.Anonymous && field.Kind() == reflect.Struct {
			for k, name := range configKeys(field) {
				keys[k] = name
			}
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		keys[field.Addr().Pointer()] = name
	}
	return keys
}

// pluralKey finds the key of a repeatable flag whose value is gathered
// elsewhere (--root into roots): the flag's name in camelCase, plural.
func pluralKey(keys map[uintptr]string, flagName string) string {
	parts := strings.Split(flagName, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	want := strings.Join(parts, "") + "s"
	for _, k := range keys {
		if k == want {
			return k
		}
	}
	return ""
}
