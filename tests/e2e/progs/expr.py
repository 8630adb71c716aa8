"""Mirror of expr.c: a recursive-descent evaluator."""

src = ""
pos = 0


def skip_spaces():
    global pos
    while pos < len(src) and src[pos] == " ":
        pos += 1


def peek():
    skip_spaces()
    if pos < len(src):
        return src[pos]
    return ""


def parse_number():
    global pos
    value = 0
    skip_spaces()
    while pos < len(src) and "0" <= src[pos] <= "9":
        value = value * 10 + (ord(src[pos]) - 48)
        pos += 1
    return value


def parse_factor():
    global pos
    c = peek()
    if c == "-":
        pos += 1
        return -parse_factor()
    if c == "(":
        pos += 1
        value = parse_expr()
        if peek() == ")":
            pos += 1
        return value
    return parse_number()


def parse_term():
    global pos
    value = parse_factor()
    while peek() == "*":
        pos += 1
        value *= parse_factor()
    return value


def parse_expr():
    global pos
    value = parse_term()
    while True:
        c = peek()
        if c == "+":
            pos += 1
            value += parse_term()
        elif c == "-":
            pos += 1
            value -= parse_term()
        else:
            return value


def evaluate(text):
    global src, pos
    src = text
    pos = 0
    value = parse_expr()
    if peek() != "":
        print("trailing input at %d" % pos)
    return value


def run_all():
    inputs = (
        "1 + 2 * 3",
        "(1 + 2) * (3 - 4 * (5 + 6))",
        "-(7 * (8 - (9 + 10 * -(2)))) + 3",
        "((((((42))))))",
        "2 * (3 + (4 * (5 + (6 * (7 + 1)))))",
        "12 - 5 - 3 * -2 + (1)",
        "--3 * ((2 - 1) * (1 - 2)) - -(-(4))",
    )
    for text in inputs:
        value = evaluate(text)
        print("%s = %d" % (text, value))


def main():
    run_all()


if __name__ == "__main__":
    main()
# SPDX-License-Identifier: MIT
