/* A recursive-descent evaluator: parse_expr -> parse_term -> parse_factor -> parse_expr
 * (parentheses) and parse_factor -> parse_factor (unary minus), with peek and skip_spaces
 * called from every level: the edge rule in shapes other than a simple cycle. */
#include <stdio.h>

static const char *src;
static int pos;

long long parse_expr(void);

void skip_spaces(void)
{
    while (src[pos] == ' ')
        pos++;
}

int peek(void)
{
    skip_spaces();
    return src[pos];
}

long long parse_number(void)
{
    long long value = 0;

    skip_spaces();
    while (src[pos] >= '0' && src[pos] <= '9') {
        value = value * 10 + (src[pos] - '0');
        pos++;
    }
    return value;
}

long long parse_factor(void)
{
    int c = peek();

    if (c == '-') {
        pos++;
        return -parse_factor();
    }
    if (c == '(') {
        pos++;
        long long value = parse_expr();
        if (peek() == ')')
            pos++;
        return value;
    }
    return parse_number();
}

long long parse_term(void)
{
    long long value = parse_factor();

    while (peek() == '*') {
        pos++;
        value *= parse_factor();
    }
    return value;
}

long long parse_expr(void)
{
    long long value = parse_term();

    for (;;) {
        int c = peek();
        if (c == '+') {
            pos++;
            value += parse_term();
        } else if (c == '-') {
            pos++;
            value -= parse_term();
        } else {
            return value;
        }
    }
}

long long evaluate(const char *text)
{
    src = text;
    pos = 0;
    long long value = parse_expr();
    if (peek() != '\0')
        printf("trailing input at %d\n", pos);
    return value;
}

void run_all(void)
{
    static const char *const inputs[] = {
        "1 + 2 * 3",
        "(1 + 2) * (3 - 4 * (5 + 6))",
        "-(7 * (8 - (9 + 10 * -(2)))) + 3",
        "((((((42))))))",
        "2 * (3 + (4 * (5 + (6 * (7 + 1)))))",
        "12 - 5 - 3 * -2 + (1)",
        "--3 * ((2 - 1) * (1 - 2)) - -(-(4))",
    };

    for (unsigned i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        long long value = evaluate(inputs[i]);
        printf("%s = %lld\n", inputs[i], value);
    }
}

int main(void)
{
    run_all();
    return 0;
}
/* SPDX-License-Identifier: MIT */
