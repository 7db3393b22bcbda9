
// judgebox split harness, Go: the runtime of the tests' process, which holds no code of the solution
// (its binary is execute-only, so the process is non-dumpable). judgeboxStart reads the nonce, starts
// the solution's program (the command after "--", in the working folder; its stdin and stdout
// /dev/null, the request and answer pipes as descriptors 3 and 4, its stderr this process's); a call
// of the solution's function is a request and an answer.

var judgeboxNonce []byte
var judgeboxMarker *judgeboxos.File
var judgeboxRequests *judgeboxos.File
var judgeboxAnswers *judgeboxos.File

// no marker: the run is a runtime error
func judgeboxLost(why string) {
	judgeboxos.Stderr.WriteString("judgebox: " + why + "\n")
	judgeboxos.Exit(3)
}

func judgeboxStart() {
	one := make([]byte, 1)
	for {
		n, err := judgeboxos.Stdin.Read(one)
		if n == 0 || err != nil || one[0] == '\n' {
			break
		}
		judgeboxNonce = append(judgeboxNonce, one[0])
	}
	sep := -1
	for i, a := range judgeboxos.Args {
		if a == "--" {
			sep = i
			break
		}
	}
	if sep < 0 || sep+1 >= len(judgeboxos.Args) {
		judgeboxLost("no command of the solution's program after --")
	}
	command := judgeboxos.Args[sep+1:]
	judgeboxos.Args = judgeboxos.Args[:sep]
	reqR, reqW, err1 := judgeboxos.Pipe()
	ansR, ansW, err2 := judgeboxos.Pipe()
	if err1 != nil || err2 != nil {
		judgeboxLost("no pipe for the solution's process")
	}
	solution := judgeboxexec.Command(command[0], command[1:]...)
	solution.Dir = ".."
	solution.Stderr = judgeboxos.Stderr
	solution.ExtraFiles = []*judgeboxos.File{reqR, ansW}
	if err := solution.Start(); err != nil {
		judgeboxLost("cannot start the solution's program: " + err.Error())
	}
	reqR.Close()
	ansW.Close()
	judgeboxRequests, judgeboxAnswers = reqW, ansR
	judgeboxMarker = judgeboxos.Stdout
	// the tests' own prints and the testing package's failure report go to stderr, never to the marker's stream
	judgeboxos.Stdout = judgeboxos.Stderr
}

func judgeboxReport(status string, code int) {
	judgeboxMarker.WriteString("\n" + string(judgeboxNonce) + " " + status + "\n")
	judgeboxos.Exit(code)
}

// judgeboxCall sends the arguments (pointers to the proxy's parameters), reads the results into
// results (pointers), and writes back each slice's elements and each map's entries as the solution's
// function left them; the solution's panic is this process's panic, with its message
func judgeboxCall(args []interface{}, results []interface{}) {
	var request judgeboxbytes.Buffer
	func() {
		defer func() {
			if r := recover(); r != nil {
				if bad, ok := r.(judgeboxBad); ok {
					judgeboxLost("an argument cannot cross: " + bad.why)
				}
				panic(r)
			}
		}()
		for _, a := range args {
			judgeboxPutValue(&request, judgeboxreflect.ValueOf(a).Elem())
		}
	}()
	if !judgeboxSend(judgeboxRequests, request.Bytes()) {
		judgeboxLost("the solution's process ended before a call of its function")
	}
	answer, ok := judgeboxReceive(judgeboxAnswers)
	if !ok || len(answer) == 0 {
		judgeboxLost("the solution's process ended during a call of its function")
	}
	if answer[0] == 'p' {
		panic(string(answer[1:]))
	}
	if answer[0] != 'r' {
		judgeboxLost("the solution's process answered a call with no value")
	}
	in := &judgeboxIn{answer[1:]}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if bad, ok := r.(judgeboxBad); ok {
					judgeboxLost("the solution's process answered a malformed value: " + bad.why)
				}
				panic(r)
			}
		}()
		for _, r := range results {
			in.getValue(judgeboxreflect.ValueOf(r).Elem())
		}
		for _, a := range args {
			v := judgeboxreflect.ValueOf(a).Elem()
			if v.Kind() != judgeboxreflect.Slice && v.Kind() != judgeboxreflect.Map {
				continue
			}
			back := judgeboxreflect.New(v.Type()).Elem()
			in.getValue(back)
			if v.Kind() == judgeboxreflect.Slice {
				judgeboxreflect.Copy(v, back)
			} else if !v.IsNil() {
				for _, k := range v.MapKeys() {
					v.SetMapIndex(k, judgeboxreflect.Value{})
				}
				it := back.MapRange()
				for it.Next() {
					v.SetMapIndex(it.Key(), it.Value())
				}
			}
		}
		if len(in.rest) != 0 {
			panic(judgeboxBad{"more than the call's values"})
		}
	}()
}
