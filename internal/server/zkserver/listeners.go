package zkserver

// Listeners returns the addresses the server's process listens on, read from
// /proc (Linux). It is how a test shows from outside the server that nothing
// is bound beyond loopback (claim E1).
func (s *Server) Listeners() ([]string, error) {
	if s.run == nil {
		return nil, errNoControl
	}
	pid, err := s.run.pid()
	if err != nil {
		return nil, err
	}
	socks, err := Sockets(pid)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range socks {
		if k.Listening {
			out = append(out, k.Local)
		}
	}
	return out, nil
}
