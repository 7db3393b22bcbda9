
// judgebox split harness, Go: the solution's program serves calls of its function; requests come on
// descriptor 3 and answers go to 4 (its stdin and stdout are /dev/null).
func judgeboxServe(call func(in *judgeboxIn) []byte) {
	requests := judgeboxos.NewFile(3, "requests")
	answers := judgeboxos.NewFile(4, "answers")
	for {
		request, ok := judgeboxReceive(requests)
		if !ok {
			return
		}
		answer := func() (out []byte) {
			defer func() {
				if r := recover(); r != nil {
					if bad, ok := r.(judgeboxBad); ok {
						judgeboxos.Stderr.WriteString("judgebox: " + bad.why + "\n")
						judgeboxos.Exit(2)
					}
					out = append([]byte{'p'}, []byte(judgeboxfmt.Sprint(r))...)
				}
			}()
			return call(&judgeboxIn{request})
		}()
		if !judgeboxSend(answers, answer) {
			return
		}
	}
}
