package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// RunInfo is what an operator run was: kept with its results, so that a
// report written later from the cache (-cached) can say it.
type RunInfo struct {
	Command    string  `json:"command"`
	Date       string  `json:"date"`
	Wall       float64 `json:"wall"`
	Ran        int     `json:"ran"`
	Cached     int     `json:"cached"`
	Budget     string  `json:"budget"`
	OverBudget int     `json:"overBudget"`
	Sample     int     `json:"sample"`
	Files      string  `json:"files"`
	Jobs       int     `json:"jobs,omitempty"`
	CPU        float64 `json:"cpu,omitempty"` // user and system seconds of the run's child processes
}

func runInfoPath(key string) (string, error) {
	dir, err := cacheDir()
	return filepath.Join(dir, "run-"+key+".json"), err
}

func saveRunInfo(key string, i *RunInfo) error {
	p, err := runInfoPath(key)
	if err != nil {
		return err
	}
	b, err := json.Marshal(i)
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

func loadRunInfo(key string) (*RunInfo, error) {
	p, err := runInfoPath(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var i RunInfo
	return &i, json.Unmarshal(b, &i)
}

// cachedFault is one fault's full run (every run line), kept with the hash
// of its file's text: a changed fault is run again.
type cachedFault struct {
	Hash    string       `json:"hash"`
	Date    string       `json:"date"`
	Lines   []LineResult `json:"lines"`
	Err     string       `json:"err,omitempty"`
	Seconds float64      `json:"seconds"`
}

type catalogueCache struct {
	path string
	m    map[string]cachedFault
}

func openCatalogueCache(key string) (*catalogueCache, error) {
	dir, err := cacheDir()
	if err != nil {
		return nil, err
	}
	c := &catalogueCache{path: filepath.Join(dir, "catalogue-"+key+".json"), m: map[string]cachedFault{}}
	if b, err := os.ReadFile(c.path); err == nil {
		_ = json.Unmarshal(b, &c.m)
	}
	return c, nil
}

func faultHash(f Fault) string {
	h := sha256.New()
	for _, e := range f.Edits {
		h.Write([]byte(e.File + "\x00" + e.Old + "\x00" + e.New + "\x00"))
	}
	for _, r := range f.Runs {
		h.Write([]byte(r.pkg))
		for _, t := range r.tests {
			h.Write([]byte(" " + t))
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func (c *catalogueCache) put(f Fault, fr FaultResult) error {
	c.m[f.ID] = cachedFault{Hash: faultHash(f), Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Lines: fr.Lines, Err: fr.Err, Seconds: fr.Seconds}
	b, err := json.Marshal(c.m)
	if err != nil {
		return err
	}
	return os.WriteFile(c.path, b, 0o644)
}

// get returns f's cached result, or one that says it has none.
func (c *catalogueCache) get(f Fault) FaultResult {
	cf, ok := c.m[f.ID]
	if !ok || cf.Hash != faultHash(f) {
		return FaultResult{Fault: f, Err: "not run: no cached result of this fault's text (run without -cached)"}
	}
	return FaultResult{Fault: f, Lines: cf.Lines, Err: cf.Err, Seconds: cf.Seconds, Date: cf.Date}
}
