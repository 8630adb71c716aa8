/*
 * views/short_names.c and the labels built on it (fnprof convert --short-names): a table of
 * demangled names as gcc and clang write them, a yaml-cpp class of name, names the parser
 * must leave alone, its bounds, and labels that never merge two functions.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

static const char *const cases[][2] = {
    {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
     "std::string"},
    {"std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >",
     "std::wstring"},
    {"std::__cxx11::basic_string<char16_t, std::char_traits<char16_t>, std::allocator<char16_t> >",
     "std::u16string"},
    {"std::__cxx11::basic_string<char32_t, std::char_traits<char32_t>, std::allocator<char32_t> >",
     "std::u32string"},
    {"std::__1::basic_string<char, std::__1::char_traits<char>, std::__1::allocator<char>>",
     "std::string"},
    {"std::vector<int, std::allocator<int> >", "std::vector<int>"},
    {"std::vector<std::vector<int, std::allocator<int> >, std::allocator<std::vector<int, "
     "std::allocator<int> >> >",
     "std::vector<std::vector<int>>"},
    {"std::vector<int, MyAlloc<int> >", "std::vector<int, MyAlloc<int>>"},
    {"std::vector<int, std::allocator<long> >", "std::vector<int, std::allocator<long>>"},
    {"std::map<int, double, std::less<int>, std::allocator<std::pair<int const, double> > >",
     "std::map<int, double>"},
    {"std::map<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
     "std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
     "std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">> >, std::less<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >>, std::allocator<std::pair<std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> > const, "
     "std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
     "std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">> >> > >",
     "std::map<std::string, std::vector<std::string>>"},
    {"std::map<int, int, std::greater<int>, std::allocator<std::pair<int const, int> > >",
     "std::map<int, int, std::greater<int>>"},
    {"std::map<int, int, std::less<int>, std::allocator<std::pair<const int, int>>>",
     "std::map<int, int>"},
    {"std::unordered_map<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >, int, std::hash<std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> >>, "
     "std::equal_to<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">>, std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > const, int> > >",
     "std::unordered_map<std::string, int>"},
    {"std::unordered_set<int, std::hash<int>, std::equal_to<int>, std::allocator<int> >",
     "std::unordered_set<int>"},
    {"std::set<long, std::less<long>, std::allocator<long> >", "std::set<long>"},
    {"std::multiset<long, std::less<long>, std::allocator<long> >", "std::multiset<long>"},
    {"std::multimap<int, int, std::less<int>, std::allocator<std::pair<int const, int> > >",
     "std::multimap<int, int>"},
    {"std::list<int, std::allocator<int> >", "std::list<int>"},
    {"std::deque<int, std::allocator<int> >", "std::deque<int>"},
    {"std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> "
     ">(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
     "std::ostream& std::operator<< <std::char_traits<char>>(std::ostream&, char const*)"},
    {"std::basic_istream<wchar_t, std::char_traits<wchar_t> >", "std::wistream"},
    {"std::__cxx11::basic_ostringstream<char, std::char_traits<char>, std::allocator<char> >",
     "std::ostringstream"},
    {"std::unique_ptr<Foo, std::default_delete<Foo> >", "std::unique_ptr<Foo>"},
    {"std::unique_ptr<Foo, Deleter>", "std::unique_ptr<Foo, Deleter>"},
    {"std::shared_ptr<std::vector<int, std::allocator<int> > >",
     "std::shared_ptr<std::vector<int>>"},
    {"cfg::detail::index[abi:cxx11](std::vector<cfg::detail::node, "
     "std::allocator<cfg::detail::node> > const&)",
     "cfg::detail::index(std::vector<cfg::detail::node> const&)"},
    {"bool operator< <int>(int, int)", "bool operator< <int>(int, int)"},
    {"Foo::operator<(Foo const&) const", "Foo::operator<(Foo const&) const"},
    {"Foo::operator<<(std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >)",
     "Foo::operator<<(std::string)"},
    {"Foo::operator>>(std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >&)",
     "Foo::operator>>(std::string&)"},
    {"Foo::operator->() const", "Foo::operator->() const"},
    {"Foo::operator()(std::vector<int, std::allocator<int> >) const",
     "Foo::operator()(std::vector<int>) const"},
    {"Foo::operator std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">() const",
     "Foo::operator std::string() const"},
    {"Foo::operator new(unsigned long)", "Foo::operator new(unsigned long)"},
    {"main::{lambda(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     "> const&)#1}::operator()(std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > const&) const",
     "main::{lambda(std::string const&)#1}::operator()(std::string const&) const"},
    {"(anonymous namespace)::helper(std::vector<std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> >, "
     "std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">> >)",
     "(anonymous namespace)::helper(std::vector<std::string>)"},
    {"ns::(anonymous namespace)::Box<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >>::get() const",
     "ns::(anonymous namespace)::Box<std::string>::get() const"},
    {"call(void (*)(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">), int (Foo::*)(int) const)",
     "call(void (*)(std::string), int (Foo::*)(int) const)"},
    {"std::function<void (std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >)>::operator()(std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> >) const",
     "std::function<void (std::string)>::operator()(std::string) const"},
    {"std::vector<int, std::allocator<int> >::push_back(int&&)",
     "std::vector<int>::push_back(int&&)"},
    {"std::array<int, 3ul>::size() const", "std::array<int, 3ul>::size() const"},
    {"foo(int) [clone .isra.0]", "foo(int) [clone .isra.0]"},
    {"YAML::detail::node_data::get<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >>(std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > const&, "
     "std::shared_ptr<YAML::detail::memory_holder>)::{lambda(std::pair<YAML::detail::node*, "
     "YAML::detail::node*>)#1}::operator()(std::pair<YAML::detail::node*, YAML::detail::node*>) "
     "const",
     "YAML::detail::node_data::get<std::string>(std::string const&, "
     "std::shared_ptr<YAML::detail::memory_holder>)::{lambda(std::pair<YAML::detail::node*, "
     "YAML::detail::node*>)#1}::operator()(std::pair<YAML::detail::node*, YAML::detail::node*>) "
     "const"},
    {"YAML::convert<std::map<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >, std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> >> >, "
     "std::less<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >>, "
     "std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> > const, std::vector<std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> >, "
     "std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">> >> > >>::decode(YAML::Node const&, std::map<std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> >, std::vector<std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> >, "
     "std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">> >, std::less<std::__cxx11::basic_string<char, std::char_traits<char>, "
     "std::allocator<char> >>, std::allocator<std::pair<std::__cxx11::basic_string<char, "
     "std::char_traits<char>, std::allocator<char> > const, "
     "std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, "
     "std::allocator<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
     ">> >> > >&)",
     "YAML::convert<std::map<std::string, std::vector<std::string>>>::decode(YAML::Node const&, "
     "std::map<std::string, std::vector<std::string>>&)"},
    {"main", "main"},
    {"<module>", "<module>"},
    {"a < b", "a < b"},
    {"f(", "f("},
    {"unbalanced<int", "unbalanced<int"},
    {"x>y", "x>y"},
};

START_TEST(standard_names_shorten_as_debuggers_show_them)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *s = fnp_short_name(cases[i][0], "/src/x.cpp");
        ck_assert_ptr_nonnull(s);
        ck_assert_msg(!strcmp(s, cases[i][1]), "case %zu: %s\n  got  %s\n  want %s", i, cases[i][0],
                      s, cases[i][1]);
        /* bounded: the output never outgrows the input here */
        ck_assert_uint_le(strlen(s), strlen(cases[i][0]));
        free(s);
    }
}
END_TEST

START_TEST(static_initialisers_are_named_after_their_file)
{
    static const char *const init[][3] = {
        {"__static_initialization_and_destruction_0(int, int)", "/src/yaml.cpp",
         "static initialisers of yaml.cpp"},
        {"__static_initialization_and_destruction_0()", "/src/a/node.cpp",
         "static initialisers of node.cpp"},
        {"global constructors keyed to YAML::Node::Node()", "/src/node.cpp",
         "global constructors of node.cpp"},
        {"_GLOBAL__sub_I_main", "/src/main.cpp", "global constructors of main.cpp"},
        {"__cxx_global_var_init.3", "/src/m.cpp", "static initialisers of m.cpp (3)"},
        /* no file known: the name stays what it is */
        {"__static_initialization_and_destruction_0(int, int)", "",
         "__static_initialization_and_destruction_0(int, int)"},
        /* pstats' built-ins (file "~") are never touched */
        {"<built-in method builtins.len>", "~", "<built-in method builtins.len>"},
        {"std::vector<int, std::allocator<int> >", "~", "std::vector<int, std::allocator<int> >"},
    };
    for (size_t i = 0; i < sizeof init / sizeof init[0]; i++) {
        char *s = fnp_short_name(init[i][0], init[i][1]);
        ck_assert_ptr_nonnull(s);
        ck_assert_str_eq(s, init[i][2]);
        free(s);
    }
}
END_TEST

START_TEST(deep_or_long_names_stay_whole_and_bounded)
{
    /* 10000 nested templates: beyond the parser's depth, the name comes back as it was */
    size_t depth = 10000;
    char *deep = malloc(depth * 3 + 8);
    size_t n = 0;
    for (size_t i = 0; i < depth; i++)
        memcpy(deep + n, "a<", 2), n += 2;
    deep[n++] = 'b';
    memset(deep + n, '>', depth);
    n += depth;
    deep[n] = '\0';
    char *s = fnp_short_name(deep, "x.cpp");
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, deep);
    free(s);
    free(deep);

    /* 200 arguments, each a spelled-out string: shortened, and no longer than the input */
    const char *arg = "std::__cxx11::basic_string<char, std::char_traits<char>, "
                      "std::allocator<char> >";
    size_t cap = 200 * (strlen(arg) + 2) + 16;
    char *wide = malloc(cap), *want = malloc(cap);
    strcpy(wide, "f(");
    strcpy(want, "f(");
    for (int i = 0; i < 200; i++) {
        strcat(wide, i ? ", " : "");
        strcat(wide, arg);
        strcat(want, i ? ", std::string" : "std::string");
    }
    strcat(wide, ")");
    strcat(want, ")");
    s = fnp_short_name(wide, "x.cpp");
    ck_assert_str_eq(s, want);
    free(s);
    free(wide);
    free(want);
}
END_TEST

static void add(struct fnp_profile *p, size_t i, const char *file, uint32_t line, const char *name)
{
    p->funcs[i].key = (struct fnp_key){file, line, name};
}

static size_t count(char **labels, size_t n, const char *label)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += !strcmp(labels[i], label);
    return c;
}

START_TEST(two_keys_that_shorten_alike_keep_apart)
{
    struct fnp_func funcs[7];
    memset(funcs, 0, sizeof funcs);
    struct fnp_profile p;
    memset(&p, 0, sizeof p);
    p.funcs = funcs;
    p.nfuncs = 7;
    /* libstdc++'s and libc++'s string at one place: one short name, two functions */
    add(&p, 0, "/s/a.cpp", 3,
        "f(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)");
    add(&p, 1, "/s/a.cpp", 3,
        "f(std::__1::basic_string<char, std::__1::char_traits<char>, std::__1::allocator<char>>)");
    /* one short name at two places: file:line tells them apart */
    add(&p, 2, "/s/b.cpp", 7, "g(std::vector<int, std::allocator<int> >)");
    add(&p, 3, "/s/c.cpp", 9, "g(std::vector<int, std::allocator<int>>)");
    /* a name already short, equal to another's short form at another place */
    add(&p, 4, "/s/d.cpp", 1, "h(std::string)");
    add(&p, 5, "/s/e.cpp", 2,
        "h(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)");
    add(&p, 6, "/s/yaml.cpp", 0, "__static_initialization_and_destruction_0(int, int)");

    char **l = fnp_labels_new(&p, 1);
    ck_assert_ptr_nonnull(l);
    for (size_t i = 0; i < 7; i++)
        ck_assert_uint_eq(count(l, 7, l[i]), 1);
    /* the full names tell these two apart: each is its own */
    ck_assert_str_eq(l[0], p.funcs[0].key.name);
    ck_assert_str_eq(l[1], p.funcs[1].key.name);
    ck_assert_str_eq(l[2], "g(std::vector<int>) [b.cpp:7]");
    ck_assert_str_eq(l[3], "g(std::vector<int>) [c.cpp:9]");
    ck_assert_str_eq(l[4], "h(std::string) [d.cpp:1]");
    ck_assert_str_eq(l[5], "h(std::string) [e.cpp:2]");
    ck_assert_str_eq(l[6], "static initialisers of yaml.cpp");
    fnp_labels_free(l, 7);

    /* without --short-names: the keys' names, as before */
    l = fnp_labels_new(&p, 0);
    ck_assert_str_eq(l[2], "g(std::vector<int, std::allocator<int> >)");
    ck_assert_str_eq(l[6], "__static_initialization_and_destruction_0(int, int)");
    fnp_labels_free(l, 7);

    /* dot's names (file:line drawn beside them): full only where name and place collide */
    char **d = fnp_names_new(&p);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d[0], p.funcs[0].key.name);
    ck_assert_str_eq(d[1], p.funcs[1].key.name);
    ck_assert_str_eq(d[2], "g(std::vector<int>)");
    ck_assert_str_eq(d[5], "h(std::string)");
    fnp_labels_free(d, 7);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("short_names");
    TCase *tc = tcase_create("short_names");
    tcase_add_test(tc, standard_names_shorten_as_debuggers_show_them);
    tcase_add_test(tc, static_initialisers_are_named_after_their_file);
    tcase_add_test(tc, deep_or_long_names_stay_whole_and_bounded);
    tcase_add_test(tc, two_keys_that_shorten_alike_keep_apart);
    suite_add_tcase(s, tc);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
/* SPDX-License-Identifier: MIT */
