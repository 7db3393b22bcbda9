
// judgebox split harness, Rust: the typed values that cross between the tests' and the solution's
// processes. Both sides know the types (the entry function's signature), so values carry no kind:
// integers of every width (as i128) and floats (as f64, NaN and infinities bit for bit),
// bool, char, String/str (UTF-8), Vec/slices, VecDeque, Option, Box, HashMap, HashSet, BTreeMap,
// BTreeSet, tuples up to 8 and (), nested. A malformed value reads as None.
#[allow(dead_code)]
mod judgebox_wire {
    use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
    use std::convert::TryInto;
    use std::hash::Hash;

    pub trait Put {
        fn put(&self, o: &mut Vec<u8>);
    }
    pub trait Get: Sized {
        fn get(i: &mut &[u8]) -> Option<Self>;
    }

    fn take<'a>(i: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if i.len() < n {
            return None;
        }
        let (a, b) = i.split_at(n);
        *i = b;
        Some(a)
    }
    fn put_len(o: &mut Vec<u8>, n: usize) {
        o.extend_from_slice(&(n as u64).to_le_bytes());
    }
    fn get_len(i: &mut &[u8]) -> Option<usize> {
        let n = u64::from_le_bytes(take(i, 8)?.try_into().ok()?);
        if n > i.len() as u64 {
            return None; // every element takes a byte at least, but ()
        }
        Some(n as usize)
    }

    // every integer crosses as an i128 and every float as an f64, so that the two sides may declare
    // other widths (an answer's `n: usize` for the prompt's `n: isize`, as a literal of the tests
    // would take either); a value the receiving type cannot hold is malformed
    macro_rules! integers {
        ($($t:ty),*) => {$(
            impl Put for $t {
                fn put(&self, o: &mut Vec<u8>) { o.extend_from_slice(&(*self as i128).to_le_bytes()); }
            }
            impl Get for $t {
                fn get(i: &mut &[u8]) -> Option<Self> {
                    let v = i128::from_le_bytes(take(i, 16)?.try_into().ok()?);
                    std::convert::TryFrom::try_from(v).ok()
                }
            }
        )*};
    }
    integers!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, usize);
    impl Put for f64 {
        fn put(&self, o: &mut Vec<u8>) { o.extend_from_slice(&self.to_bits().to_le_bytes()); }
    }
    impl Get for f64 {
        fn get(i: &mut &[u8]) -> Option<Self> {
            Some(f64::from_bits(u64::from_le_bytes(take(i, 8)?.try_into().ok()?)))
        }
    }
    impl Put for f32 {
        fn put(&self, o: &mut Vec<u8>) { (*self as f64).put(o); }
    }
    impl Get for f32 {
        fn get(i: &mut &[u8]) -> Option<Self> { Some(f64::get(i)? as f32) }
    }
    fn byte(i: &mut &[u8]) -> Option<u8> { Some(take(i, 1)?[0]) }

    impl Put for bool {
        fn put(&self, o: &mut Vec<u8>) { o.push(*self as u8); }
    }
    impl Get for bool {
        fn get(i: &mut &[u8]) -> Option<Self> {
            match byte(i)? { 0 => Some(false), 1 => Some(true), _ => None }
        }
    }
    impl Put for char {
        fn put(&self, o: &mut Vec<u8>) { (*self as u32).put(o); }
    }
    impl Get for char {
        fn get(i: &mut &[u8]) -> Option<Self> { std::char::from_u32(u32::get(i)?) }
    }
    impl Put for () {
        fn put(&self, _: &mut Vec<u8>) {}
    }
    impl Get for () {
        fn get(_: &mut &[u8]) -> Option<Self> { Some(()) }
    }
    impl Put for str {
        fn put(&self, o: &mut Vec<u8>) { put_len(o, self.len()); o.extend_from_slice(self.as_bytes()); }
    }
    impl Put for String {
        fn put(&self, o: &mut Vec<u8>) { self.as_str().put(o); }
    }
    impl Get for String {
        fn get(i: &mut &[u8]) -> Option<Self> {
            let n = get_len(i)?;
            String::from_utf8(take(i, n)?.to_vec()).ok()
        }
    }
    impl<T: Put + ?Sized> Put for &T {
        fn put(&self, o: &mut Vec<u8>) { (**self).put(o); }
    }
    impl<T: Put + ?Sized> Put for &mut T {
        fn put(&self, o: &mut Vec<u8>) { (**self).put(o); }
    }
    impl<T: Put + ?Sized> Put for Box<T> {
        fn put(&self, o: &mut Vec<u8>) { (**self).put(o); }
    }
    impl<T: Get> Get for Box<T> {
        fn get(i: &mut &[u8]) -> Option<Self> { Some(Box::new(T::get(i)?)) }
    }
    impl<T: Put> Put for [T] {
        fn put(&self, o: &mut Vec<u8>) { put_len(o, self.len()); for x in self { x.put(o); } }
    }
    impl<T: Put, const N: usize> Put for [T; N] {
        fn put(&self, o: &mut Vec<u8>) { self[..].put(o); }
    }
    impl<T: Put> Put for Vec<T> {
        fn put(&self, o: &mut Vec<u8>) { self[..].put(o); }
    }
    impl<T: Get> Get for Vec<T> {
        fn get(i: &mut &[u8]) -> Option<Self> {
            let n = get_len(i)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n { v.push(T::get(i)?); }
            Some(v)
        }
    }
    impl<T: Put> Put for VecDeque<T> {
        fn put(&self, o: &mut Vec<u8>) { put_len(o, self.len()); for x in self { x.put(o); } }
    }
    impl<T: Get> Get for VecDeque<T> {
        fn get(i: &mut &[u8]) -> Option<Self> { Some(Vec::<T>::get(i)?.into_iter().collect()) }
    }
    impl<T: Put> Put for Option<T> {
        fn put(&self, o: &mut Vec<u8>) {
            match self { None => o.push(0), Some(x) => { o.push(1); x.put(o); } }
        }
    }
    impl<T: Get> Get for Option<T> {
        fn get(i: &mut &[u8]) -> Option<Self> {
            match byte(i)? { 0 => Some(None), 1 => Some(Some(T::get(i)?)), _ => None }
        }
    }
    impl<K: Put, V: Put, S> Put for HashMap<K, V, S> {
        fn put(&self, o: &mut Vec<u8>) { put_len(o, self.len()); for (k, v) in self { k.put(o); v.put(o); } }
    }
    impl<K: Get + Eq + Hash, V: Get> Get for HashMap<K, V> {
        fn get(i: &mut &[u8]) -> Option<Self> {
            let n = get_len(i)?;
            let mut m = HashMap::new();
            for _ in 0..n { let k = K::get(i)?; m.insert(k, V::get(i)?); }
            if m.len() != n { return None; }
            Some(m)
        }
    }
    impl<T: Put, S> Put for HashSet<T, S> {
        fn put(&self, o: &mut Vec<u8>) { put_len(o, self.len()); for x in self { x.put(o); } }
    }
    impl<T: Get + Eq + Hash> Get for HashSet<T> {
        fn get(i: &mut &[u8]) -> Option<Self> {
            let v = Vec::<T>::get(i)?;
            let n = v.len();
            let s: HashSet<T> = v.into_iter().collect();
            if s.len() != n { return None; }
            Some(s)
        }
    }
    impl<K: Put, V: Put> Put for BTreeMap<K, V> {
        fn put(&self, o: &mut Vec<u8>) { put_len(o, self.len()); for (k, v) in self { k.put(o); v.put(o); } }
    }
    impl<K: Get + Ord, V: Get> Get for BTreeMap<K, V> {
        fn get(i: &mut &[u8]) -> Option<Self> {
            let n = get_len(i)?;
            let mut m = BTreeMap::new();
            for _ in 0..n { let k = K::get(i)?; m.insert(k, V::get(i)?); }
            if m.len() != n { return None; }
            Some(m)
        }
    }
    impl<T: Put> Put for BTreeSet<T> {
        fn put(&self, o: &mut Vec<u8>) { put_len(o, self.len()); for x in self { x.put(o); } }
    }
    impl<T: Get + Ord> Get for BTreeSet<T> {
        fn get(i: &mut &[u8]) -> Option<Self> {
            let v = Vec::<T>::get(i)?;
            let n = v.len();
            let s: BTreeSet<T> = v.into_iter().collect();
            if s.len() != n { return None; }
            Some(s)
        }
    }
    macro_rules! tuples {
        ($(($($t:ident $n:tt),+)),*) => {$(
            impl<$($t: Put),+> Put for ($($t,)+) {
                fn put(&self, o: &mut Vec<u8>) { $(self.$n.put(o);)+ }
            }
            impl<$($t: Get),+> Get for ($($t,)+) {
                fn get(i: &mut &[u8]) -> Option<Self> { Some(($($t::get(i)?,)+)) }
            }
        )*};
    }
    tuples!((A 0), (A 0, B 1), (A 0, B 1, C 2), (A 0, B 1, C 2, D 3), (A 0, B 1, C 2, D 3, E 4),
            (A 0, B 1, C 2, D 3, E 4, F 5), (A 0, B 1, C 2, D 3, E 4, F 5, G 6), (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7));

    pub fn send(w: &mut dyn std::io::Write, message: &[u8]) -> bool {
        let mut framed = Vec::with_capacity(message.len() + 8);
        put_len(&mut framed, message.len());
        framed.extend_from_slice(message);
        w.write_all(&framed).is_ok() && w.flush().is_ok()
    }
    pub fn receive(r: &mut dyn std::io::Read) -> Option<Vec<u8>> {
        let mut size = [0u8; 8];
        r.read_exact(&mut size).ok()?;
        let n = u64::from_le_bytes(size);
        if n > (1u64 << 34) { return None; }
        let mut message = vec![0u8; n as usize];
        r.read_exact(&mut message).ok()?;
        Some(message)
    }
}
