
// judgebox split harness, Go: the typed values that cross between the tests' and the solution's
// processes, read as the types both sides declare (the entry function's signature): booleans,
// integers of every width (as 64 bits), floats (as float64 bits: NaN and infinities kept), strings,
// slices and maps (nil kept apart from empty), arrays, pointers, and interface{} values of the
// registered dynamic types below (nested). A malformed or unregistered value is an error.

var judgeboxKinds = map[string]judgeboxreflect.Type{}

func init() {
	for _, x := range []interface{}{false, int(0), int8(0), int16(0), int32(0), int64(0), uint(0), uint8(0),
		uint16(0), uint32(0), uint64(0), float32(0), float64(0), "", []interface{}{}, []int{}, []int64{},
		[]float64{}, []string{}, []bool{}, [][]int{}, [][]interface{}{}, map[string]interface{}{},
		map[interface{}]interface{}{}, map[string]int{}, map[string]string{}, map[int]int{}, map[string]float64{}} {
		t := judgeboxreflect.TypeOf(x)
		judgeboxKinds[t.String()] = t
	}
}

type judgeboxBad struct{ why string }

func judgeboxUint(b *judgeboxbytes.Buffer, n uint64) {
	var x [8]byte
	judgeboxbinary.LittleEndian.PutUint64(x[:], n)
	b.Write(x[:])
}

func judgeboxPutValue(b *judgeboxbytes.Buffer, v judgeboxreflect.Value) {
	switch v.Kind() {
	case judgeboxreflect.Bool:
		if v.Bool() {
			b.WriteByte(1)
		} else {
			b.WriteByte(0)
		}
	case judgeboxreflect.Int, judgeboxreflect.Int8, judgeboxreflect.Int16, judgeboxreflect.Int32, judgeboxreflect.Int64:
		judgeboxUint(b, uint64(v.Int()))
	case judgeboxreflect.Uint, judgeboxreflect.Uint8, judgeboxreflect.Uint16, judgeboxreflect.Uint32, judgeboxreflect.Uint64, judgeboxreflect.Uintptr:
		judgeboxUint(b, v.Uint())
	case judgeboxreflect.Float32, judgeboxreflect.Float64:
		judgeboxUint(b, judgeboxmath.Float64bits(v.Float()))
	case judgeboxreflect.String:
		judgeboxUint(b, uint64(v.Len()))
		b.WriteString(v.String())
	case judgeboxreflect.Slice:
		if v.IsNil() {
			b.WriteByte(0)
			return
		}
		b.WriteByte(1)
		judgeboxUint(b, uint64(v.Len()))
		for i := 0; i < v.Len(); i++ {
			judgeboxPutValue(b, v.Index(i))
		}
	case judgeboxreflect.Array:
		for i := 0; i < v.Len(); i++ {
			judgeboxPutValue(b, v.Index(i))
		}
	case judgeboxreflect.Map:
		if v.IsNil() {
			b.WriteByte(0)
			return
		}
		b.WriteByte(1)
		judgeboxUint(b, uint64(v.Len()))
		it := v.MapRange()
		for it.Next() {
			judgeboxPutValue(b, it.Key())
			judgeboxPutValue(b, it.Value())
		}
	case judgeboxreflect.Ptr:
		if v.IsNil() {
			b.WriteByte(0)
			return
		}
		b.WriteByte(1)
		judgeboxPutValue(b, v.Elem())
	case judgeboxreflect.Interface:
		if v.IsNil() {
			b.WriteByte(0)
			return
		}
		e := v.Elem()
		name := e.Type().String()
		if _, ok := judgeboxKinds[name]; !ok {
			panic(judgeboxBad{"a value of type " + name + " cannot cross"})
		}
		b.WriteByte(1)
		judgeboxUint(b, uint64(len(name)))
		b.WriteString(name)
		judgeboxPutValue(b, e)
	default:
		panic(judgeboxBad{"a value of kind " + v.Kind().String() + " cannot cross"})
	}
}

type judgeboxIn struct{ rest []byte }

func (in *judgeboxIn) take(n uint64) []byte {
	if n > uint64(len(in.rest)) {
		panic(judgeboxBad{"a value past the message's end"})
	}
	out := in.rest[:n]
	in.rest = in.rest[n:]
	return out
}

func (in *judgeboxIn) uint() uint64 { return judgeboxbinary.LittleEndian.Uint64(in.take(8)) }

func (in *judgeboxIn) present() bool {
	switch in.take(1)[0] {
	case 0:
		return false
	case 1:
		return true
	}
	panic(judgeboxBad{"a malformed flag"})
}

func (in *judgeboxIn) size() int {
	n := in.uint()
	if n > uint64(len(in.rest)) {
		panic(judgeboxBad{"a size past the message's end"})
	}
	return int(n)
}

// judgeboxGetValue sets v (settable) to the next value, read as v's type
func (in *judgeboxIn) getValue(v judgeboxreflect.Value) {
	t := v.Type()
	switch v.Kind() {
	case judgeboxreflect.Bool:
		v.SetBool(in.present())
	case judgeboxreflect.Int, judgeboxreflect.Int8, judgeboxreflect.Int16, judgeboxreflect.Int32, judgeboxreflect.Int64:
		n := int64(in.uint())
		if v.OverflowInt(n) {
			panic(judgeboxBad{"an integer too large for " + t.String()})
		}
		v.SetInt(n)
	case judgeboxreflect.Uint, judgeboxreflect.Uint8, judgeboxreflect.Uint16, judgeboxreflect.Uint32, judgeboxreflect.Uint64, judgeboxreflect.Uintptr:
		n := in.uint()
		if v.OverflowUint(n) {
			panic(judgeboxBad{"an integer too large for " + t.String()})
		}
		v.SetUint(n)
	case judgeboxreflect.Float32, judgeboxreflect.Float64:
		v.SetFloat(judgeboxmath.Float64frombits(in.uint()))
	case judgeboxreflect.String:
		v.SetString(string(in.take(uint64(in.size()))))
	case judgeboxreflect.Slice:
		if !in.present() {
			v.Set(judgeboxreflect.Zero(t))
			return
		}
		n := in.size()
		s := judgeboxreflect.MakeSlice(t, n, n)
		for i := 0; i < n; i++ {
			in.getValue(s.Index(i))
		}
		v.Set(s)
	case judgeboxreflect.Array:
		for i := 0; i < v.Len(); i++ {
			in.getValue(v.Index(i))
		}
	case judgeboxreflect.Map:
		if !in.present() {
			v.Set(judgeboxreflect.Zero(t))
			return
		}
		n := in.size()
		m := judgeboxreflect.MakeMapWithSize(t, n)
		for i := 0; i < n; i++ {
			k := judgeboxreflect.New(t.Key()).Elem()
			in.getValue(k)
			e := judgeboxreflect.New(t.Elem()).Elem()
			in.getValue(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case judgeboxreflect.Ptr:
		if !in.present() {
			v.Set(judgeboxreflect.Zero(t))
			return
		}
		p := judgeboxreflect.New(t.Elem())
		in.getValue(p.Elem())
		v.Set(p)
	case judgeboxreflect.Interface:
		if !in.present() {
			v.Set(judgeboxreflect.Zero(t))
			return
		}
		name := string(in.take(uint64(in.size())))
		dynamic, ok := judgeboxKinds[name]
		if !ok || !dynamic.Implements(t) {
			panic(judgeboxBad{"a value of type " + name + " for " + t.String()})
		}
		e := judgeboxreflect.New(dynamic).Elem()
		in.getValue(e)
		v.Set(e)
	default:
		panic(judgeboxBad{"a value of kind " + v.Kind().String() + " cannot cross"})
	}
}

func judgeboxSend(w judgeboxio.Writer, message []byte) bool {
	var size [8]byte
	judgeboxbinary.LittleEndian.PutUint64(size[:], uint64(len(message)))
	_, err := w.Write(append(size[:], message...))
	return err == nil
}

func judgeboxReceive(r judgeboxio.Reader) ([]byte, bool) {
	var size [8]byte
	if _, err := judgeboxio.ReadFull(r, size[:]); err != nil {
		return nil, false
	}
	n := judgeboxbinary.LittleEndian.Uint64(size[:])
	if n > 1<<34 {
		return nil, false
	}
	message := make([]byte, n)
	if _, err := judgeboxio.ReadFull(r, message); err != nil {
		return nil, false
	}
	return message, true
}

// judgeboxPutAs puts v as a value of the type t the other side declares: as it is when it has that
// type; converted when Go converts it (a number of another width); else, for t a boolean, number or
// string, read back from its %v text (an answer that returns a *big.Int where the prompt says int, as
// the one program's fmt.Sprintf("%v") comparison would print it). Anything else cannot cross.
func judgeboxPutAs(b *judgeboxbytes.Buffer, v judgeboxreflect.Value, t judgeboxreflect.Type) {
	switch {
	case v.Type() == t:
		judgeboxPutValue(b, v)
	case v.Type().ConvertibleTo(t) && v.Kind() != judgeboxreflect.String && t.Kind() != judgeboxreflect.String &&
		v.Kind() != judgeboxreflect.Slice && v.Kind() != judgeboxreflect.Map:
		// only a value the declared type holds exactly (an int64 for an int, 3.0 for 3): a conversion
		// that truncates (3.75 to 3) would make a wrong answer right (red team, issue 38)
		c := v.Convert(t)
		if !c.Type().ConvertibleTo(v.Type()) || judgeboxfmt.Sprint(c.Convert(v.Type()).Interface()) != judgeboxfmt.Sprint(v.Interface()) {
			panic(judgeboxBad{"a " + v.Type().String() + " the declared " + t.String() + " does not hold"})
		}
		judgeboxPutValue(b, c)
	case t.Kind() <= judgeboxreflect.Float64 || t.Kind() == judgeboxreflect.String:
		// the value's text read as the declared type, only when it reads whole and prints the same
		// ("3" for 3, as the tests' %v comparisons see it; never "3 is not the answer")
		read := judgeboxreflect.New(t)
		text := judgeboxfmt.Sprint(v.Interface())
		if t.Kind() == judgeboxreflect.String {
			read.Elem().SetString(text)
		} else if _, err := judgeboxfmt.Sscan(text, read.Interface()); err != nil || judgeboxfmt.Sprint(read.Elem().Interface()) != text {
			panic(judgeboxBad{"a " + v.Type().String() + " for a " + t.String()})
		}
		judgeboxPutValue(b, read.Elem())
	default:
		panic(judgeboxBad{"a " + v.Type().String() + " for a " + t.String()})
	}
}
