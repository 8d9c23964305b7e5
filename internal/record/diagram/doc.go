// Package diagram turns a claim's recorded trace into a diagram.
//
// The input is the test's own log: the lines the suite writes anyway, in
// the grammar every proof shares. Nothing is drawn that the run did not
// log, so a diagram can be no better and no worse than its record.
//
//	B invoke get /x                 an actor's request (Jepsen's :invoke)
//	B ok "0"                        its result (:ok)
//	B fail ...                      its failure (:fail)
//	A info ...                      anything else the actor saw (:info);
//	                                with a request open, an unknown outcome
//	A info session HasSession (server ADDR, session 0x...)
//	A info event PATH EventNodeDeleted
//	nemesis hold 3->2 (bytes kept)  a fault on the ensemble's links
//	nemesis proxy P ...             a client proxy's decisions (xid, zxid, err)
//	# phase                         a step of the scenario
//	=== ATTR  T zk19.evidence ...   the decisive observation, drawn as
//	                                "evidence: ..."
//	=== ATTR  T zk19.differs ...    where the run differs from the article,
//	                                drawn as "differs: ..."
//
// Any other line is kept as a remark, over the actor it starts with when it
// starts with one. The participants come from the lines as well: the actors,
// the servers they are connected to (named zkN when the server's own log in
// the input gives its client port, else by port), the proxies between them
// (an actor whose session address is a proxy's listening address talks
// through that proxy), the fenced resource when an actor writes to one, and
// the nemesis.
//
// FromLog renders the same events as a Mermaid sequenceDiagram and as D2
// source with shape: sequence_diagram; the SVGs are drawn from the D2 source
// by the separate tools/d2svg module, so the root module never compiles d2.
package diagram
