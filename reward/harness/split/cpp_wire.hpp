// judgebox split harness, C++: the typed values that cross between the tests' process and the
// solution's. Pasted into both programs (see judgebox.reward.harness.split.cpp). Encoding, one value:
//   integral (bool, char, int, long, ...)  i<decimal>;
//   floating                               f<printf %a, or nan / inf / -inf>;
//   string                                 s<bytes>:<bytes of it>
//   sequence, set, map (2 per entry)       l<count>:<values>
//   pair, tuple                            t<count>:<values>
//   optional                               o0 | o1<value>
//   variant                                v<index>:<value>
//   any (long, int, long long, double, float, bool, char, string, const char*, vector of long,
//        double, string or any, map of long to long, string to long or string)   a<tag><value>
// A message is <length>\n<bytes>; an answer begins with 'r' (then the result and every argument as
// the function left it) or 'x', the kind of exception and its what() (the solution raised). The decoder
// refuses anything else. The channels are stdio streams: no <unistd.h> name (read, write, sync, link,
// pipe, sleep ...) is declared in the solution's program, whose own globals may have those names.
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <list>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <algorithm>
#include <exception>
#include <new>
#include <typeinfo>
#include <vector>
#if __cplusplus >= 201703L
#include <any>
#include <optional>
#include <variant>
#endif

namespace judgebox_wire {

struct Bad : std::runtime_error {
  Bad() : std::runtime_error("judgebox: a malformed value crossed from the solution's process") {}
};

struct In {
  const char* p;
  const char* e;
  char next() { if (p >= e) throw Bad(); return *p++; }
  void expect(char c) { if (next() != c) throw Bad(); }
  unsigned long long count(char end) {
    unsigned long long n = 0; int digits = 0;
    while (true) {
      char c = next();
      if (c == end && digits) return n;
      if (c < '0' || c > '9' || ++digits > 19) throw Bad();
      n = n * 10 + (unsigned long long)(c - '0');
    }
  }
  std::string until(char end) {
    const char* q = p;
    while (q < e && *q != end) ++q;
    if (q >= e) throw Bad();
    std::string s(p, q); p = q + 1; return s;
  }
};

typedef std::string Out;

// ---- integral and floating
template <class T> typename std::enable_if<std::is_integral<T>::value>::type put(Out& o, const T& v) {
  char b[48];
  if (std::is_signed<T>::value) std::snprintf(b, sizeof b, "i%lld;", (long long)v);
  else std::snprintf(b, sizeof b, "i%llu;", (unsigned long long)v);
  o += b;
}
template <class T> typename std::enable_if<std::is_integral<T>::value>::type get(In& in, T& v) {
  in.expect('i');
  std::string t = in.until(';');
  if (t.empty()) throw Bad();
  errno = 0; char* end = nullptr;
  if (t[0] == '-') {
    long long x = std::strtoll(t.c_str(), &end, 10);
    if (errno || *end || !std::is_signed<T>::value || x < (long long)std::numeric_limits<T>::min()) throw Bad();
    v = (T)x;
  } else {
    unsigned long long x = std::strtoull(t.c_str(), &end, 10);
    if (errno || *end || x > (unsigned long long)std::numeric_limits<T>::max()) throw Bad();
    v = (T)x;
  }
}
template <class T> typename std::enable_if<std::is_floating_point<T>::value>::type put(Out& o, const T& v) {
  char b[64];
  if (std::isnan(v)) std::snprintf(b, sizeof b, "f%snan;", std::signbit(v) ? "-" : "");
  else std::snprintf(b, sizeof b, "f%La;", (long double)v);
  o += b;
}
template <class T> typename std::enable_if<std::is_floating_point<T>::value>::type get(In& in, T& v) {
  in.expect('f');
  std::string t = in.until(';');
  char* end = nullptr;
  long double x = std::strtold(t.c_str(), &end);
  if (t.empty() || *end) throw Bad();
  v = (T)x;
}
// ---- strings
inline void put(Out& o, const std::string& v) { o += 's'; o += std::to_string(v.size()); o += ':'; o += v; }
inline void put(Out& o, const char* v) { put(o, std::string(v)); }
inline void get(In& in, std::string& v) {
  in.expect('s');
  unsigned long long n = in.count(':');
  if (n > (unsigned long long)(in.e - in.p)) throw Bad();
  v.assign(in.p, (size_t)n); in.p += n;
}
// ---- forward declarations of the containers (each may hold the others)
template <class T, class A> void put(Out&, const std::vector<T, A>&);
template <class T, class A> void get(In&, std::vector<T, A>&);
template <class T, class A> void put(Out&, const std::list<T, A>&);
template <class T, class A> void get(In&, std::list<T, A>&);
template <class T, class A> void put(Out&, const std::deque<T, A>&);
template <class T, class A> void get(In&, std::deque<T, A>&);
template <class T, class C, class A> void put(Out&, const std::set<T, C, A>&);
template <class T, class C, class A> void get(In&, std::set<T, C, A>&);
template <class T, class C, class A> void put(Out&, const std::multiset<T, C, A>&);
template <class T, class C, class A> void get(In&, std::multiset<T, C, A>&);
template <class T, class H, class E, class A> void put(Out&, const std::unordered_set<T, H, E, A>&);
template <class T, class H, class E, class A> void get(In&, std::unordered_set<T, H, E, A>&);
template <class K, class V, class C, class A> void put(Out&, const std::map<K, V, C, A>&);
template <class K, class V, class C, class A> void get(In&, std::map<K, V, C, A>&);
template <class K, class V, class H, class E, class A> void put(Out&, const std::unordered_map<K, V, H, E, A>&);
template <class K, class V, class H, class E, class A> void get(In&, std::unordered_map<K, V, H, E, A>&);
template <class A, class B> void put(Out&, const std::pair<A, B>&);
template <class A, class B> void get(In&, std::pair<A, B>&);
template <class... T> void put(Out&, const std::tuple<T...>&);
template <class... T> void get(In&, std::tuple<T...>&);
#if __cplusplus >= 201703L
template <class T> void put(Out&, const std::optional<T>&);
template <class T> void get(In&, std::optional<T>&);
template <class... T> void put(Out&, const std::variant<T...>&);
template <class... T> void get(In&, std::variant<T...>&);
void put(Out&, const std::any&);
void get(In&, std::any&);
#endif

template <class C> void put_seq(Out& o, const C& c) {
  o += 'l'; o += std::to_string(c.size()); o += ':';
  for (const auto& x : c) put(o, x);
}
template <class C> unsigned long long open_seq(In& in) {
  in.expect('l');
  unsigned long long n = in.count(':');
  if (n > (unsigned long long)(in.e - in.p)) throw Bad();  // every value takes at least one byte
  return n;
}
template <class T, class A> void put(Out& o, const std::vector<T, A>& v) { put_seq(o, v); }
template <class T, class A> void get(In& in, std::vector<T, A>& v) {
  unsigned long long n = open_seq<std::vector<T, A>>(in);
  v.clear();
  for (unsigned long long i = 0; i < n; ++i) { T x{}; get(in, x); v.push_back(std::move(x)); }
}
template <class T, class A> void put(Out& o, const std::list<T, A>& v) { put_seq(o, v); }
template <class T, class A> void get(In& in, std::list<T, A>& v) {
  unsigned long long n = open_seq<std::list<T, A>>(in);
  v.clear();
  for (unsigned long long i = 0; i < n; ++i) { T x{}; get(in, x); v.push_back(std::move(x)); }
}
template <class T, class A> void put(Out& o, const std::deque<T, A>& v) { put_seq(o, v); }
template <class T, class A> void get(In& in, std::deque<T, A>& v) {
  unsigned long long n = open_seq<std::deque<T, A>>(in);
  v.clear();
  for (unsigned long long i = 0; i < n; ++i) { T x{}; get(in, x); v.push_back(std::move(x)); }
}
template <class S> void get_set(In& in, S& v) {
  unsigned long long n = open_seq<S>(in);
  v.clear();
  for (unsigned long long i = 0; i < n; ++i) { typename S::value_type x{}; get(in, x); v.insert(std::move(x)); }
}
template <class T, class C, class A> void put(Out& o, const std::set<T, C, A>& v) { put_seq(o, v); }
template <class T, class C, class A> void get(In& in, std::set<T, C, A>& v) { get_set(in, v); }
template <class T, class C, class A> void put(Out& o, const std::multiset<T, C, A>& v) { put_seq(o, v); }
template <class T, class C, class A> void get(In& in, std::multiset<T, C, A>& v) { get_set(in, v); }
template <class T, class H, class E, class A> void put(Out& o, const std::unordered_set<T, H, E, A>& v) { put_seq(o, v); }
template <class T, class H, class E, class A> void get(In& in, std::unordered_set<T, H, E, A>& v) { get_set(in, v); }
template <class M> void put_map(Out& o, const M& m) {
  o += 'l'; o += std::to_string(2 * m.size()); o += ':';
  for (const auto& kv : m) { put(o, kv.first); put(o, kv.second); }
}
template <class M> void get_map(In& in, M& m) {
  unsigned long long n = open_seq<M>(in);
  if (n % 2) throw Bad();
  m.clear();
  for (unsigned long long i = 0; i < n; i += 2) {
    typename M::key_type k{}; typename M::mapped_type v{};
    get(in, k); get(in, v); m.emplace(std::move(k), std::move(v));
  }
}
template <class K, class V, class C, class A> void put(Out& o, const std::map<K, V, C, A>& m) { put_map(o, m); }
template <class K, class V, class C, class A> void get(In& in, std::map<K, V, C, A>& m) { get_map(in, m); }
template <class K, class V, class H, class E, class A> void put(Out& o, const std::unordered_map<K, V, H, E, A>& m) { put_map(o, m); }
template <class K, class V, class H, class E, class A> void get(In& in, std::unordered_map<K, V, H, E, A>& m) { get_map(in, m); }
template <class A, class B> void put(Out& o, const std::pair<A, B>& v) { o += "t2:"; put(o, v.first); put(o, v.second); }
template <class A, class B> void get(In& in, std::pair<A, B>& v) {
  in.expect('t'); if (in.count(':') != 2) throw Bad();
  get(in, v.first); get(in, v.second);
}
template <size_t I, class... T> typename std::enable_if<I == sizeof...(T)>::type put_items(Out&, const std::tuple<T...>&) {}
template <size_t I, class... T> typename std::enable_if<(I < sizeof...(T))>::type put_items(Out& o, const std::tuple<T...>& v) {
  put(o, std::get<I>(v)); put_items<I + 1>(o, v);
}
template <size_t I, class... T> typename std::enable_if<I == sizeof...(T)>::type get_items(In&, std::tuple<T...>&) {}
template <size_t I, class... T> typename std::enable_if<(I < sizeof...(T))>::type get_items(In& in, std::tuple<T...>& v) {
  get(in, std::get<I>(v)); get_items<I + 1>(in, v);
}
template <class... T> void put(Out& o, const std::tuple<T...>& v) {
  o += 't'; o += std::to_string(sizeof...(T)); o += ':'; put_items<0>(o, v);
}
template <class... T> void get(In& in, std::tuple<T...>& v) {
  in.expect('t'); if (in.count(':') != sizeof...(T)) throw Bad();
  get_items<0>(in, v);
}
#if __cplusplus >= 201703L
template <class T> void put(Out& o, const std::optional<T>& v) { if (v) { o += "o1"; put(o, *v); } else o += "o0"; }
template <class T> void get(In& in, std::optional<T>& v) {
  in.expect('o');
  char c = in.next();
  if (c == '0') { v.reset(); return; }
  if (c != '1') throw Bad();
  T x{}; get(in, x); v = std::move(x);
}
template <class... T> void put(Out& o, const std::variant<T...>& v) {
  if (v.valueless_by_exception()) throw std::runtime_error("judgebox: a valueless variant cannot cross");
  o += 'v'; o += std::to_string(v.index()); o += ':';
  std::visit([&o](const auto& x) { put(o, x); }, v);
}
template <class V, size_t I = 0> void get_alternative(In& in, V& v, size_t index) {
  if constexpr (I < std::variant_size<V>::value) {
    if (index == I) { typename std::variant_alternative<I, V>::type x{}; get(in, x); v.template emplace<I>(std::move(x)); }
    else get_alternative<V, I + 1>(in, v, index);
  } else {
    throw Bad();
  }
}
template <class... T> void get(In& in, std::variant<T...>& v) {
  in.expect('v'); get_alternative(in, v, (size_t)in.count(':'));
}
template <class T> bool put_any_as(Out& o, const std::any& v, char tag) {
  if (v.type() != typeid(T)) return false;
  o += 'a'; o += tag; put(o, std::any_cast<const T&>(v)); return true;
}
inline void put(Out& o, const std::any& v) {
  if (!v.has_value()) { o += "a0"; return; }
  if (put_any_as<long>(o, v, 'l') || put_any_as<int>(o, v, 'i') || put_any_as<long long>(o, v, 'L') ||
      put_any_as<double>(o, v, 'd') || put_any_as<float>(o, v, 'f') || put_any_as<bool>(o, v, 'b') ||
      put_any_as<char>(o, v, 'c') || put_any_as<std::string>(o, v, 's') ||
      put_any_as<std::vector<long>>(o, v, 'V') || put_any_as<std::vector<double>>(o, v, 'D') ||
      put_any_as<std::vector<std::string>>(o, v, 'S') || put_any_as<std::vector<std::any>>(o, v, 'A') ||
      put_any_as<std::map<long, long>>(o, v, 'M') || put_any_as<std::map<std::string, long>>(o, v, 'N') ||
      put_any_as<std::map<std::string, std::string>>(o, v, 'T'))
    return;
  if (v.type() == typeid(const char*)) { o += "aC"; put(o, std::string(std::any_cast<const char*>(v))); return; }
  throw std::runtime_error(std::string("judgebox: a std::any holding ") + v.type().name() + " cannot cross");
}
template <class T> void get_any_as(In& in, std::any& v) { T x{}; get(in, x); v = std::move(x); }
inline void get(In& in, std::any& v) {
  in.expect('a');
  switch (in.next()) {
    case '0': v.reset(); return;
    case 'l': get_any_as<long>(in, v); return;
    case 'i': get_any_as<int>(in, v); return;
    case 'L': get_any_as<long long>(in, v); return;
    case 'd': get_any_as<double>(in, v); return;
    case 'f': get_any_as<float>(in, v); return;
    case 'b': get_any_as<bool>(in, v); return;
    case 'c': get_any_as<char>(in, v); return;
    case 's': get_any_as<std::string>(in, v); return;
    case 'C': {  // a string literal: its text lives as long as the process
      static std::deque<std::string> texts;
      std::string x; get(in, x); texts.push_back(std::move(x)); v = texts.back().c_str(); return;
    }
    case 'V': get_any_as<std::vector<long>>(in, v); return;
    case 'D': get_any_as<std::vector<double>>(in, v); return;
    case 'S': get_any_as<std::vector<std::string>>(in, v); return;
    case 'A': get_any_as<std::vector<std::any>>(in, v); return;
    case 'M': get_any_as<std::map<long, long>>(in, v); return;
    case 'N': get_any_as<std::map<std::string, long>>(in, v); return;
    case 'T': get_any_as<std::map<std::string, std::string>>(in, v); return;
    default: throw Bad();
  }
}
#endif

// ---- an exception of the solution's function: its standard kind and what(), thrown again in the tests
inline std::string raised(std::exception_ptr e) {
  std::string kind = "n", what;
  try { std::rethrow_exception(e); }
  catch (const std::invalid_argument& x) { kind = "i"; what = x.what(); }
  catch (const std::domain_error& x) { kind = "d"; what = x.what(); }
  catch (const std::length_error& x) { kind = "l"; what = x.what(); }
  catch (const std::out_of_range& x) { kind = "o"; what = x.what(); }
  catch (const std::logic_error& x) { kind = "g"; what = x.what(); }
  catch (const std::range_error& x) { kind = "R"; what = x.what(); }
  catch (const std::overflow_error& x) { kind = "v"; what = x.what(); }
  catch (const std::underflow_error& x) { kind = "u"; what = x.what(); }
  catch (const std::runtime_error& x) { kind = "t"; what = x.what(); }
  catch (const std::bad_alloc&) { kind = "b"; }
  catch (const std::exception& x) { kind = "e"; what = x.what(); }
  catch (...) {}
  std::string out = "x" + kind;
  put(out, what);
  return out;
}
struct Raised : std::exception {  // a non-standard exception of the solution (thrown 7, a class of its own)
  const char* what() const noexcept override { return "judgebox: the solution's function raised a non-standard exception"; }
};
[[noreturn]] inline void raise_again(char kind, const std::string& what) {
  switch (kind) {
    case 'i': throw std::invalid_argument(what);
    case 'd': throw std::domain_error(what);
    case 'l': throw std::length_error(what);
    case 'o': throw std::out_of_range(what);
    case 'g': throw std::logic_error(what);
    case 'R': throw std::range_error(what);
    case 'v': throw std::overflow_error(what);
    case 'u': throw std::underflow_error(what);
    case 't': throw std::runtime_error(what);
    case 'b': throw std::bad_alloc();
    case 'e': throw std::runtime_error(what);
    default: throw Raised();
  }
}

// ---- what each argument becomes after the call: written back when the caller passed it by reference
template <class T> void put_back(Out& o, const T& v) { put(o, v); }
template <class T> void get_back(In& in, T& v) { get(in, v); }
template <class T> void get_back(In& in, const T&) { T skipped{}; get(in, skipped); }

// ---- messages: <length>\n<bytes>
inline bool send(std::FILE* f, const std::string& payload) {
  std::string head = std::to_string(payload.size()) + "\n";
  return std::fwrite(head.data(), 1, head.size(), f) == head.size() &&
         std::fwrite(payload.data(), 1, payload.size(), f) == payload.size() && std::fflush(f) == 0;
}
// false at the end of the stream or on a malformed frame
inline bool receive(std::FILE* f, std::string& payload) {
  std::string head;
  while (true) {
    int c = std::fgetc(f);
    if (c == EOF) return false;
    if (c == '\n') break;
    if (c < '0' || c > '9' || head.size() > 12) return false;
    head += (char)c;
  }
  if (head.empty()) return false;
  unsigned long long size = std::strtoull(head.c_str(), nullptr, 10);
  payload.clear();
  char chunk[65536];
  while (payload.size() < size) {
    size_t want = (size_t)std::min<unsigned long long>(sizeof chunk, size - payload.size());
    size_t got = std::fread(chunk, 1, want, f);
    if (got == 0) return false;
    payload.append(chunk, got);
  }
  return true;
}

}  // namespace judgebox_wire
